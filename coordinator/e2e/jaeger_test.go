package e2e_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	"github.com/c2cluster/c2cluster/worker/singlenode"
)

// One job's trace, found through Jaeger's HTTP query API: the coordinator
// (this process) and a worker process export to a real Jaeger (built from
// tools/jaeger, cached under bin/), and the trace holds every span of a
// job (pkg/telemetry's Span* names; docs/cluster.md, "Telemetry") from both
// services under one trace id, linked across the NATS
// hop. The coordinator's web page then shows that job and its trace in a
// real browser (checkWebPage).
func TestJobTraceInJaeger(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	bctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	bin, err := singlenode.BuildJaeger(bctx, root, testLogWriter{t})
	if errors.Is(err, singlenode.ErrJaegerUnbuildable) {
		t.Skipf("Jaeger cannot be built on this machine, so its query API cannot be checked: %v", err)
	}
	require.NoError(t, err)
	jcfg := singlenode.JaegerConfig{Binary: bin, Dir: t.TempDir(),
		OTLPGRPC: freeAddr(t), OTLPHTTP: freeAddr(t), QueryHTTP: freeAddr(t), QueryGRPC: freeAddr(t), Health: freeAddr(t)}
	jg, err := singlenode.StartJaeger(bctx, jcfg)
	require.NoError(t, err)
	t.Cleanup(jg.Stop)

	tr, err := telemetry.Setup(context.Background(), telemetry.TracingConfig{ServiceName: "c2-coordinator", Endpoint: jg.OTLPEndpoint, Insecure: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tr.Shutdown(sctx)
		otel.SetTracerProvider(noop.NewTracerProvider())
	})

	c := newCluster(t, queue.Config{})
	c.startWorker("proc-trace", "", "-otlp", jg.OTLPEndpoint)
	doc := sealedC1(t, 104)
	job := c.submit(doc)
	j := c.await(job)
	requireValidProof(t, doc, j)
	require.Len(t, j.TraceId, 32)
	fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
	require.NoError(t, tr.Provider.ForceFlush(fctx))
	fcancel()

	wctx, wcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer wcancel()
	trace, err := singlenode.WaitForTrace(wctx, jg.QueryURL, j.TraceId, singlenode.ExpectedSpans(2))
	require.NoError(t, err)
	var sb strings.Builder
	singlenode.Waterfall(&sb, trace)
	t.Logf("trace of job %s from Jaeger:\n%s", job, sb.String())

	require.Equal(t, j.TraceId, trace.TraceID)
	require.Equal(t, []string{"c2-coordinator", "c2-worker"}, trace.Services())
	byID := map[string]singlenode.Span{}
	for _, s := range trace.Spans {
		byID[s.SpanID] = s
	}
	parts := 0
	for _, s := range trace.Spans {
		switch s.Name {
		case telemetry.SpanPartition:
			parts++
			require.Equal(t, "c2-worker", s.Service)
			require.Equal(t, job, s.Tags["c2.job"])
			require.Equal(t, "proc-trace", s.Tags["c2.worker"])
			require.Equal(t, "0", s.Tags["c2.device"])
			require.Equal(t, "1", s.Tags["c2.attempt"])
			parent, ok := byID[s.ParentID]
			require.True(t, ok, "the partition span's parent is in the trace")
			require.Equal(t, telemetry.SpanPublish, parent.Name, "linked across NATS to the coordinator's publish span")
			require.Equal(t, "c2-coordinator", parent.Service)
		case telemetry.SpanInterlockWait, telemetry.SpanSynthesize, telemetry.SpanGPUCompute, telemetry.SpanVerify:
			require.Equal(t, telemetry.SpanPartition, byID[s.ParentID].Name, "%s is a child of a partition span", s.Name)
			if s.Name == telemetry.SpanSynthesize && runtime.GOOS == "linux" {
				// the synthesis threads' own CPU time: positive, at most
				// every core busy for the span's length
				cpu, err := strconv.ParseFloat(s.Tags[string(telemetry.AttrCPUSeconds)], 64)
				require.NoError(t, err, "synthesize span tag %s", telemetry.AttrCPUSeconds)
				require.Positive(t, cpu)
				require.LessOrEqual(t, cpu, s.Duration.Seconds()*float64(runtime.NumCPU())+0.05)
			}
		}
	}
	require.Equal(t, 2, parts)
	// Lock wait is its own span, never inside a GPU span: each wait ends
	// before its partition's compute starts.
	for _, w := range trace.Spans {
		if w.Name != telemetry.SpanInterlockWait {
			continue
		}
		for _, g := range trace.Spans {
			if g.Name == telemetry.SpanGPUCompute && g.ParentID == w.ParentID {
				require.False(t, w.Start.Add(w.Duration).After(g.Start), "interlock.wait ends before gpu.compute starts")
			}
		}
	}

	t.Run("web page", func(t *testing.T) { checkWebPage(t, c, jg, j, trace) })
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
