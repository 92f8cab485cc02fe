package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func setupMemTracing(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr, err := Setup(context.Background(), TracingConfig{ServiceName: "test", Exporter: exp, SyncExport: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tr.Shutdown(context.Background())) })
	return exp
}

func TestCarrierRoundTripAnyCase(t *testing.T) {
	exp := setupMemTracing(t)
	ctx, span := Tracer().Start(context.Background(), SpanPublish, trace.WithSpanKind(trace.SpanKindProducer))
	h := nats.Header{}
	InjectNATS(ctx, h)
	span.End()
	tp := h.Get("traceparent")
	require.NotEmpty(t, tp, "traceparent injected")

	// A server or client that changed the header's case must not break the trace.
	for _, key := range []string{"traceparent", "Traceparent", "TRACEPARENT"} {
		in := nats.Header{key: []string{tp}}
		rctx := ExtractNATS(context.Background(), in)
		_, child := Tracer().Start(rctx, SpanPartition, trace.WithSpanKind(trace.SpanKindConsumer))
		child.End()
		require.Equal(t, span.SpanContext().TraceID(), child.SpanContext().TraceID(), "key %s", key)
	}
	spans := exp.GetSpans()
	require.Len(t, spans, 4)
	for _, s := range spans[1:] {
		require.Equal(t, span.SpanContext().SpanID(), s.Parent.SpanID())
	}
}

func TestCarrierSetReplacesOtherSpellings(t *testing.T) {
	h := HeaderCarrier(nats.Header{"TraceParent": []string{"old"}, "Other": []string{"x"}})
	h.Set("traceparent", "new")
	require.Equal(t, "new", h.Get("TRACEPARENT"))
	require.ElementsMatch(t, []string{"traceparent", "Other"}, h.Keys())
	require.Empty(t, HeaderCarrier(nats.Header{}).Get("traceparent"))
	require.Equal(t, context.Background(), ExtractNATS(context.Background(), nil))
}

func TestTraceParentRoundTrip(t *testing.T) {
	setupMemTracing(t)
	ctx, span := Tracer().Start(context.Background(), SpanJob)
	defer span.End()
	tp := TraceParent(ctx)
	require.Contains(t, tp, span.SpanContext().TraceID().String())
	rctx := ContextWithTraceParent(context.Background(), tp)
	require.Equal(t, span.SpanContext().SpanID(), trace.SpanContextFromContext(rctx).SpanID())
	require.Equal(t, context.Background(), ContextWithTraceParent(context.Background(), ""))
	require.False(t, trace.SpanContextFromContext(ContextWithTraceParent(context.Background(), "garbage")).IsValid())
}

func TestSetupValidates(t *testing.T) {
	_, err := Setup(context.Background(), TracingConfig{})
	require.ErrorContains(t, err, "ServiceName")
	_, err = Setup(context.Background(), TracingConfig{ServiceName: "x", SampleRatio: 2})
	require.ErrorContains(t, err, "SampleRatio")
}

func TestLoggerCarriesTraceAndJob(t *testing.T) {
	setupMemTracing(t)
	var buf bytes.Buffer
	log, err := NewLogger(&buf, LogConfig{Format: "json", Level: "debug"})
	require.NoError(t, err)
	ctx, span := Tracer().Start(context.Background(), SpanPartition)
	log.InfoContext(ctx, "proved", LogJob("j1"), LogPartition(3), LogAttempt(2))
	span.End()
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
	require.Equal(t, "j1", rec["job"])
	require.EqualValues(t, 3, rec["partition"])
	require.EqualValues(t, 2, rec["attempt"])
	require.Equal(t, span.SpanContext().TraceID().String(), rec["trace_id"])

	_, err = NewLogger(io.Discard, LogConfig{Level: "loud"})
	require.ErrorContains(t, err, "Level")
	_, err = NewLogger(io.Discard, LogConfig{Format: "xml"})
	require.ErrorContains(t, err, "Format")
}

func TestMetricsHandler(t *testing.T) {
	m := NewMetrics()
	m.QueueDepth.WithLabelValues("2KiB", "high").Set(3)
	m.StageSeconds.WithLabelValues(StageSynthesize).Observe(0.5)
	m.LockWaitSeconds.WithLabelValues("0", "compute").Observe(0.01)
	m.DeviceBusySeconds.WithLabelValues("1", StageCompute).Add(1.5)
	m.FailuresTotal.WithLabelValues("partition", "bad_input").Inc()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	require.Equal(t, 200, rec.Code)
	for _, want := range []string{
		`c2_queue_depth{lane="high",shape="2KiB"} 3`,
		`c2_stage_seconds_count{stage="synthesize"} 1`,
		`c2_lock_wait_seconds_count{device="0",lock="compute"} 1`,
		`c2_device_busy_seconds_total{device="1",stage="gpu_compute"} 1.5`,
		`c2_failures_total{kind="partition",reason="bad_input"} 1`,
		"go_goroutines",
	} {
		require.True(t, strings.Contains(body, want), "missing %q in /metrics", want)
	}
}
