# c2cluster — the few commands that matter. `make help` lists them.
SHELL := /usr/bin/env bash
GO    ?= go

.PHONY: help test

help: ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

test: ## run every test (starts what it needs; GPU tests skip without a GPU)
	@scripts/test.sh
