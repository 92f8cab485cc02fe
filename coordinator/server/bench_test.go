package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// replayWorker answers every partition with a precomputed valid proof of
// the same C1 output: the full worker protocol (Begin, blob fetch, Complete,
// assembly request, ack) without the proving, so what is measured is the
// coordination. The coordinator still batch-verifies every job's proof.
func (c *cluster) runReplayWorker(b *testing.B, slots int, proofs [][]byte) {
	ctx, cancel := context.WithCancel(c.ctx)
	var wg sync.WaitGroup
	for i := 0; i < slots; i++ {
		slot, err := c.q.NewSlot(queue.SlotConfig{Name: fmt.Sprint("replay/", i), Shapes: []string{testShape}, IdlePoll: 100 * time.Millisecond,
			Handler: func(ctx context.Context, d *queue.Delivery) error {
				t := d.Task
				out, state, err := c.store.Begin(ctx, t.JobId, t.Partition, d.Attempt, "replay")
				if err != nil {
					return err
				}
				if out != jobstore.BeginOK {
					if out == jobstore.BeginAlreadyDone && state == jobstore.StateAssembling {
						return c.q.RequestAssembly(ctx, t.JobId)
					}
					return nil
				}
				if _, err := c.q.GetBlob(ctx, t.BlobRef, t.BlobSha256); err != nil {
					return err
				}
				res, err := c.store.Complete(ctx, t.JobId, t.Partition, d.Attempt, proofs[t.Partition],
					jobstore.PartitionTimings{QueueWait: time.Since(d.Published)}, "replay")
				if err != nil {
					return err
				}
				if res.State == jobstore.StateAssembling {
					return c.q.RequestAssembly(ctx, t.JobId)
				}
				return nil
			}})
		require.NoError(b, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = slot.Run(ctx)
		}()
	}
	b.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// benchProofs proves the test C1 once with the real CPU backend.
func benchProofs(b *testing.B, c *cluster, doc []byte) [][]byte {
	co := c.startCoordinator(server.Config{})
	w := c.newWorker("prover")
	ctx, cancel := context.WithCancel(c.ctx)
	slot, err := c.q.NewSlot(queue.SlotConfig{Name: "prover", Shapes: []string{testShape}, Handler: w.handle})
	require.NoError(b, err)
	done := make(chan struct{})
	go func() { _ = slot.Run(ctx); close(done) }()
	st, err := co.client.Prove(ctx, &c2clusterv1.SubmitRequest{C1Json: doc}, nil)
	require.NoError(b, err)
	cancel()
	<-done
	co.Stop()
	return slices.Collect(slices.Chunk(st.Proof, groth16.ProofSize))
}

// BenchmarkCoordinationOverhead: one 3-partition job at a time, 3 slots;
// ns/op is the client-observed job latency (submit → done, proof verified),
// with the partition proving replaced by precomputed proofs: the
// coordination overhead of one job (prove span = 0).
func BenchmarkCoordinationOverhead(b *testing.B) {
	c := newCluster(b, queue.Config{})
	doc := sealedC1(b, 100)
	proofs := benchProofs(b, c, doc)
	co := c.startCoordinator(server.Config{Logger: slog.New(slog.DiscardHandler)})
	c.runReplayWorker(b, 3, proofs)
	b.ResetTimer()
	var submit, assemble, queueWait time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		sub, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc})
		require.NoError(b, err)
		submit += time.Since(t0)
		st, err := co.client.Await(c.ctx, sub.JobId)
		require.NoError(b, err)
		require.Equal(b, c2clusterv1.JobState_JOB_STATE_DONE, st.State)
		assemble += time.Duration(st.Timings.AssembleMs * float64(time.Millisecond))
		queueWait += time.Duration(st.Timings.QueueWaitMs * float64(time.Millisecond))
	}
	b.StopTimer()
	perJob := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perJob.Microseconds())/1000/3, "ms/partition")
	b.ReportMetric(float64(submit.Microseconds())/1000/float64(b.N), "submit-ms/job")
	b.ReportMetric(float64(assemble.Microseconds())/1000/float64(b.N), "assemble-ms/job")
	b.ReportMetric(float64(queueWait.Microseconds())/1000/float64(3*b.N), "queue-wait-ms/partition")
}

// BenchmarkDispatchThroughput: 40 jobs of 3 partitions submitted at once
// by 8 clients, 4 replay slots; reports completed partitions per second.
func BenchmarkDispatchThroughput(b *testing.B) {
	c := newCluster(b, queue.Config{})
	doc := sealedC1(b, 101)
	proofs := benchProofs(b, c, doc)
	co := c.startCoordinator(server.Config{Logger: slog.New(slog.DiscardHandler)})
	c.runReplayWorker(b, 4, proofs)
	const jobs, clients = 40, 8
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		errs := make(chan error, jobs)
		for k := 0; k < clients; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < jobs/clients; j++ {
					st, err := co.client.Prove(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc}, nil)
					if err == nil && st.State != c2clusterv1.JobState_JOB_STATE_DONE {
						err = fmt.Errorf("job %s ended %s", st.JobId, st.State)
					}
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(b, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(jobs*3*b.N)/b.Elapsed().Seconds(), "partitions/s")
	b.ReportMetric(float64(jobs*b.N)/b.Elapsed().Seconds(), "jobs/s")
}
