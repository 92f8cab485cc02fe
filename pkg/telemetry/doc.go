// Package telemetry holds c2cluster's observability plumbing, shared by the
// coordinator and the workers:
//
//   - tracing setup: an OTLP/gRPC exporter (or none), the W3C trace-context
//     propagator, and the span names and attribute keys of a job's trace
//     (Setup, Span*, Attr*; docs/cluster.md, "Telemetry");
//   - HeaderCarrier: a case-insensitive propagation carrier over NATS
//     message headers, so one trace follows a job across processes;
//   - Metrics: the Prometheus collectors of the cluster (queue depth per
//     lane, partitions in flight, stage latencies with lock wait on its own,
//     proofs and failures by reason, SRS residency, VRAM) and a /metrics
//     handler;
//   - structured logging: a slog logger whose records carry the trace and
//     span ids of their context, plus job/partition attributes.
//
// It holds no business logic: what to measure is decided by the callers.
package telemetry
