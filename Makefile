# c2cluster — the few commands that matter. `make help` lists them.
SHELL := /usr/bin/env bash
GO    ?= go
ARGS  ?=

.PHONY: help run test build jaeger cuda compose-config bench-cluster

help: ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

run: ## single node end to end: Redis, NATS, Jaeger, coordinator, CPU worker; prove a test sector, then serve its web page until Ctrl-C (ARGS=-keep=false: exit after the proof)
	@scripts/run.sh $(ARGS)

test: ## run every test (starts what it needs; GPU tests skip without a GPU)
	@scripts/test.sh

build: ## build bin/coordinator, bin/worker and bin/c2-damocles
	$(GO) build -o bin/coordinator ./coordinator
	$(GO) build -o bin/worker ./worker
	$(GO) build -o bin/c2-damocles ./coordinator/cmd/c2-damocles

jaeger: ## build Jaeger from tools/jaeger (cached under bin/)
	@scripts/build-jaeger.sh

cuda: ## build the CUDA prover library (needs nvcc; see docs/cuda.md)
	@cuda/build.sh

compose-config: ## validate docker-compose.yml (docker compose config, or the Compose schema via tools/compose)
	@scripts/check-compose.sh

bench-cluster: ## coordination overhead per partition with real workers (docs/perf/README.md#cluster-plumbing)
	$(GO) test -run XXX -bench BenchmarkCoordinationOverhead -benchtime 3x ./coordinator/e2e/
