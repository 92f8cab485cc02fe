package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/node"
)

// BenchmarkCoordinationOverhead measures what the cluster adds around the
// proving work of a job: the job's wall time as its client sees it (Submit
// to the Watch stream reporting done) minus the slowest partition's
// "partition" span (everything one worker did for it: Begin, input,
// synthesis, prove, verify, Complete). What is left is submission, queueing
// and dispatch, the assembly hand-off, the batch verification of the whole
// proof and the notification of the waiter. Two real workers (worker/node,
// one CPU slot each, in this process so their spans are in memory) prove
// each job's two partitions in parallel on a real NATS JetStream and Redis.
//
//	go test -run XXX -bench BenchmarkCoordinationOverhead -benchtime 5x ./coordinator/e2e/
func BenchmarkCoordinationOverhead(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tr, err := telemetry.Setup(context.Background(), telemetry.TracingConfig{ServiceName: "bench", Exporter: exp, SyncExport: true})
	require.NoError(b, err)
	b.Cleanup(func() {
		_ = tr.Shutdown(context.Background())
		otel.SetTracerProvider(noop.NewTracerProvider())
	})
	c := newCluster(b, queue.Config{})
	for _, id := range []string{"bench-a", "bench-b"} {
		n, err := node.New(c.ctx, node.Config{ID: id, Shapes: []string{testShape}, ParamsDir: paramsDir, TrustedParams: true,
			Backend: "cpu", GPUWorkersPerDevice: 1}, c.q, c.store)
		require.NoError(b, err)
		require.NoError(b, n.Start(c.ctx))
		b.Cleanup(func() { _ = n.Stop(context.Background()) })
	}
	docs := make([][]byte, b.N)
	for i := range docs {
		docs[i] = sealedC1(b, uint64(1000+i))
	}
	var overhead, wall, slowest, workerExtra time.Duration
	parts := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		exp.Reset()
		start := time.Now()
		res, err := c.api.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: docs[i]})
		require.NoError(b, err)
		j, err := c.api.Watch(c.ctx, res.JobId, nil)
		require.NoError(b, err)
		took := time.Since(start)
		require.Equal(b, c2clusterv1.JobState_JOB_STATE_DONE, j.State)

		// The slowest partition span of this job, and inside each partition
		// what was not synthesis, proving or verification.
		var maxPart time.Duration
		work := map[string]time.Duration{}
		partDur := map[string]time.Duration{}
		for _, s := range exp.GetSpans() {
			d := s.EndTime.Sub(s.StartTime)
			switch s.Name {
			case telemetry.SpanPartition:
				maxPart = max(maxPart, d)
				partDur[s.SpanContext.SpanID().String()] = d
			case telemetry.SpanSynthesize, "prepare", telemetry.SpanGPUUpload, telemetry.SpanGPUCompute,
				telemetry.SpanEpilogue, telemetry.SpanVerify, telemetry.SpanInterlockWait:
				work[s.Parent.SpanID().String()] += d
			}
		}
		require.Len(b, partDur, int(j.Partitions), "one partition span per partition")
		if testing.Verbose() {
			for _, s := range exp.GetSpans() {
				b.Logf("%-20s %v start+%v parent %s", s.Name, s.EndTime.Sub(s.StartTime), s.StartTime.Sub(start), s.Parent.SpanID())
			}
		}
		for id, d := range partDur {
			workerExtra += d - work[id]
		}
		parts += len(partDur)
		wall += took
		slowest += maxPart
		overhead += took - maxPart
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(wall.Milliseconds())/n, "wall-ms/job")
	b.ReportMetric(float64(slowest.Milliseconds())/n, "slowest-partition-ms/job")
	b.ReportMetric(float64(overhead.Microseconds())/1000/n, "overhead-ms/job")
	b.ReportMetric(float64(workerExtra.Microseconds())/1000/float64(parts), "worker-bookkeeping-ms/partition")
}
