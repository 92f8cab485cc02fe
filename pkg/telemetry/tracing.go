package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of c2cluster's spans.
const TracerName = "github.com/c2cluster/c2cluster"

// Span names of one job's trace (docs/cluster.md, "Telemetry"):
//
//	submit → job → publish partition (producer)
//	  → partition (consumer) → synthesize, interlock.wait, gpu.upload,
//	    gpu.compute, epilogue, verify
//	→ assemble
const (
	SpanSubmit        = "submit"
	SpanJob           = "job"
	SpanPublish       = "publish partition"
	SpanPartition     = "partition"
	SpanSynthesize    = "synthesize"
	SpanInterlockWait = "interlock.wait"
	SpanGPUUpload     = "gpu.upload"
	SpanGPUCompute    = "gpu.compute"
	SpanEpilogue      = "epilogue"
	SpanVerify        = "verify"
	SpanAssemble      = "assemble"
)

// Attribute keys used on c2cluster spans and log records.
const (
	AttrJob        = attribute.Key("c2.job")
	AttrPartition  = attribute.Key("c2.partition")
	AttrAttempt    = attribute.Key("c2.attempt")
	AttrWorker     = attribute.Key("c2.worker")
	AttrDevice     = attribute.Key("c2.device")
	AttrShape      = attribute.Key("c2.shape")
	AttrLane       = attribute.Key("c2.lane")
	AttrPartitions = attribute.Key("c2.partitions")
	// AttrCPUSeconds is the CPU time of a span's own threads (synthesize).
	AttrCPUSeconds = attribute.Key("c2.cpu_seconds")
)

// TracingConfig configures Setup.
type TracingConfig struct {
	// ServiceName is the resource's service.name ("c2-coordinator",
	// "c2-worker"). Required.
	ServiceName string
	// ServiceVersion is the resource's service.version. Optional.
	ServiceVersion string
	// Endpoint is the OTLP/gRPC collector address (host:port, e.g. Jaeger's
	// "127.0.0.1:4317"). Empty or "none": spans are created and propagated
	// but not exported.
	Endpoint string
	// Insecure disables TLS to the collector (the default for loopback
	// and in-cluster Jaeger). Default false.
	Insecure bool
	// SampleRatio is the fraction of new traces sampled, in [0, 1]; remote
	// parents' decisions are followed. Default (0) means 1: every job.
	SampleRatio float64
	// Exporter, when set, is used instead of OTLP (tests use an in-memory
	// exporter). Spans are exported synchronously when SyncExport is set.
	Exporter   sdktrace.SpanExporter
	SyncExport bool
}

func (c *TracingConfig) validate() error {
	if c.ServiceName == "" {
		return errors.New("telemetry: TracingConfig.ServiceName is required")
	}
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		return fmt.Errorf("telemetry: TracingConfig.SampleRatio %v is outside [0, 1]", c.SampleRatio)
	}
	return nil
}

// Tracing is an installed tracer provider.
type Tracing struct {
	Provider *sdktrace.TracerProvider
}

// Setup builds a tracer provider from cfg, installs it and the W3C
// trace-context + baggage propagator as the process globals, and returns it.
// Call Shutdown before exit to flush pending spans.
func Setup(ctx context.Context, cfg TracingConfig) (*Tracing, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(cfg.ServiceName),
		semconv.ServiceVersion(cfg.ServiceVersion),
	))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	ratio := cfg.SampleRatio
	if ratio == 0 {
		ratio = 1
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	}
	exp := cfg.Exporter
	if exp == nil && cfg.Endpoint != "" && !strings.EqualFold(cfg.Endpoint, "none") {
		gopts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(cfg.Endpoint)}
		if cfg.Insecure {
			gopts = append(gopts, otlptracegrpc.WithInsecure())
		}
		exp, err = otlptracegrpc.New(ctx, gopts...)
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP exporter for %s: %w", cfg.Endpoint, err)
		}
	}
	if exp != nil {
		if cfg.SyncExport {
			opts = append(opts, sdktrace.WithSyncer(exp))
		} else {
			opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
		}
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return &Tracing{Provider: tp}, nil
}

// Shutdown flushes and stops the provider.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.Provider == nil {
		return nil
	}
	return t.Provider.Shutdown(ctx)
}

// Tracer returns c2cluster's tracer from the global provider.
func Tracer() trace.Tracer { return otel.Tracer(TracerName) }

// TraceParent returns the W3C traceparent of ctx's span ("" if none), for
// storing a span context durably (e.g. in the job record) and parenting
// later spans on it with ContextWithTraceParent.
func TraceParent(ctx context.Context) string {
	m := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, m)
	return m.Get("traceparent")
}

// ContextWithTraceParent returns ctx with the remote span context of a
// traceparent produced by TraceParent. An empty or malformed value returns
// ctx unchanged.
func ContextWithTraceParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// RecordFailure marks span as failed with err (recorded as an exception
// event and as the span's status); a nil err leaves the span untouched.
func RecordFailure(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
