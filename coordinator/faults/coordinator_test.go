package faults_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// concurrentJobs is how many jobs TestCoordinatorKilledDuringConcurrentJobs
// submits at once: 100 with C2_FAULTS_LONG=1.
func concurrentJobs() int {
	if os.Getenv("C2_FAULTS_LONG") == "1" {
		return 100
	}
	return 12
}

// settleLimit is how long n jobs may take to settle on two busy cores:
// 8 minutes, or 8 s a job where that is more (100 jobs: 13 min 20 s).
func settleLimit(n int) time.Duration {
	return max(8*time.Minute, time.Duration(n)*8*time.Second)
}

// kill SIGKILLs the process and waits for it to end.
func (p *workerProc) kill(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
}

// The coordinator process SIGKILLed twice and started again on the same
// address: once as many clients submit jobs at once (each retries with
// its idempotency key until it has a job, as a client should), once while
// the accepted jobs are being proved. Every key ends with exactly one job,
// done with a verified proof; the same request with a key returns its job
// and another request with it is refused naming the job.
func TestCoordinatorKilledDuringConcurrentJobs(t *testing.T) {
	n := concurrentJobs()
	c := newBareCluster(t, queue.Config{})
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	co := c.startCoordinator(listen)
	api := client.New("http://" + listen)
	c.startWorker("w-a", "")
	c.startWorker("w-b", "")

	c1s := make([][]byte, n)
	for i := range c1s {
		c1s[i] = poreptest.SealedC1(t, testShape, 6000+uint64(i))
	}
	key := func(i int) string { return fmt.Sprintf("faults-sector-%d", i) }
	jobOf := make([]string, n)
	var accepted, refused atomic.Int32
	var wg sync.WaitGroup
	submit := func(i int, gate <-chan struct{}) {
		wg.Go(func() {
			<-gate
			for c.ctx.Err() == nil {
				ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
				res, err := api.Submit(ctx, &c2clusterv1.SubmitRequest{C1Json: c1s[i], IdempotencyKey: key(i)})
				cancel()
				if err == nil {
					jobOf[i] = res.JobId
					accepted.Add(1)
					return
				}
				refused.Add(1)
				time.Sleep(200 * time.Millisecond) // the client's retry back-off
			}
		})
	}
	// A first quarter is accepted and proving; then the rest submit at
	// once and the coordinator is killed as they do.
	open := make(chan struct{})
	close(open)
	for i := range n / 4 {
		submit(i, open)
	}
	waitFor(t, "the first submissions to be accepted", 2*time.Minute, func() bool { return int(accepted.Load()) == n/4 })
	gate := make(chan struct{})
	for i := n / 4; i < n; i++ {
		submit(i, gate)
	}
	close(gate)
	co.kill(t)
	atKill := int(accepted.Load())
	co = c.startCoordinator(listen)
	wg.Wait()
	t.Logf("coordinator killed as %d clients submitted, with %d/%d submissions accepted; %d calls failed and were retried", n-n/4, atKill, n, refused.Load())
	require.Less(t, atKill, n, "the kill must come while submissions are in flight")
	require.Positive(t, refused.Load(), "some submissions were cut off by the kill")

	docs := map[string][]byte{}
	ids := make([]string, n)
	for i, id := range jobOf {
		require.NotEmpty(t, id, "submission %d accepted", i)
		require.NotContains(t, docs, id, "two keys got one job")
		docs[id], ids[i] = c1s[i], id
	}

	// A second kill while the jobs are being proved.
	waitFor(t, "some jobs to finish", 5*time.Minute, func() bool { return c.doneCount(ids) >= n/4 })
	co.kill(t)
	killed := time.Now()
	atSecondKill := c.doneCount(ids)
	require.Less(t, atSecondKill, n, "the second kill must come while jobs are in flight")
	co = c.startCoordinator(listen)
	t.Logf("coordinator killed again with %d/%d jobs done; serving again %v later", atSecondKill, n, time.Since(killed).Round(10*time.Millisecond))

	c.requireOutcome(docs, c.settledVia(api, ids, settleLimit(n)))

	// The same request with its key: the same job. Another request with
	// the key: refused, naming the job.
	res, err := api.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: c1s[0], IdempotencyKey: key(0)})
	require.NoError(t, err)
	require.Equal(t, jobOf[0], res.JobId)
	require.True(t, res.Deduplicated)
	_, err = api.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: c1s[1], IdempotencyKey: key(0)})
	require.Equal(t, connect.CodeAlreadyExists, connect.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "bound to job "+jobOf[0])
	all, err := c.store.List(c.ctx, "", 1000)
	require.NoError(t, err)
	require.Len(t, all, n, "the duplicate and the conflicting submission made no job")

	// Bounded memory: the coordinator that proved the jobs above (its
	// warm-up) is idle; more jobs through it leave its goroutines within a
	// few of what they were and its RSS within a fixed bound.
	batch := memoryJobs()
	base := readProcMetrics(t, "http://"+listen)
	began := time.Now()
	more := map[string][]byte{}
	var moreIDs []string
	for i := range batch {
		doc := poreptest.SealedC1(t, testShape, 7000+uint64(i))
		res, err := api.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: doc, IdempotencyKey: fmt.Sprintf("faults-memory-%d", i)})
		require.NoError(t, err)
		more[res.JobId] = doc
		moreIDs = append(moreIDs, res.JobId)
	}
	st := c.settledVia(api, moreIDs, settleLimit(batch))
	for id, doc := range more {
		requireValidProof(t, doc, st[id])
	}
	after := base
	ok := pollUntil(30*time.Second, func() bool {
		after = readProcMetrics(t, "http://"+listen)
		return after.goroutines <= base.goroutines+goroutineMargin && after.rss <= base.rss+rssGrowthBound
	})
	t.Logf("coordinator after its warm-up: %d goroutines, RSS %.1f MiB, heap %.1f MiB; after %d more jobs (%v): %d goroutines, RSS %.1f MiB, heap %.1f MiB",
		base.goroutines, mib(base.rss), mib(base.heap), batch, time.Since(began).Round(100*time.Millisecond), after.goroutines, mib(after.rss), mib(after.heap))
	require.True(t, ok, "coordinator memory: goroutines %d -> %d (margin %d), RSS %.1f -> %.1f MiB (bound +%.0f MiB) after %d jobs",
		base.goroutines, after.goroutines, goroutineMargin, mib(base.rss), mib(after.rss), mib(rssGrowthBound), batch)
	require.NotContains(t, co.out.String(), "panic")
}

// memoryJobs is how many jobs TestCoordinatorKilledDuringConcurrentJobs
// runs through the idle coordinator to measure its growth: 6 (about 20 s
// on two busy cores), 100 with C2_FAULTS_LONG=1.
func memoryJobs() int {
	if os.Getenv("C2_FAULTS_LONG") == "1" {
		return 100
	}
	return 6
}

// What TestCoordinatorKilledDuringConcurrentJobs allows the idle
// coordinator to grow by over its last batch of jobs: goroutines (a
// leak of one per job shows over the 6 jobs, one per request at once) and
// resident memory (a leak of a job's C1 or proof per job would show over
// the 100 jobs of C2_FAULTS_LONG=1; the bound leaves room for the heap's
// growth to its GC target and pages the runtime has not returned yet).
const (
	goroutineMargin = 3
	rssGrowthBound  = 16 << 20
)

// procMetrics are a process's Go runtime and process metrics, read from
// its /metrics.
type procMetrics struct {
	goroutines int
	rss, heap  float64
}

func readProcMetrics(t testing.TB, base string) procMetrics {
	t.Helper()
	r, err := httptestGet(base + "/metrics")
	require.NoError(t, err)
	require.Equal(t, 200, r.code, r.body)
	var m procMetrics
	found := 0
	for _, line := range strings.Split(r.body, "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_goroutines":
			m.goroutines, found = int(f), found+1
		case "process_resident_memory_bytes":
			m.rss, found = f, found+1
		case "go_memstats_heap_alloc_bytes":
			m.heap, found = f, found+1
		}
	}
	require.Equal(t, 3, found, "go_goroutines, process_resident_memory_bytes and go_memstats_heap_alloc_bytes in /metrics")
	return m
}

func mib(b float64) float64 { return b / (1 << 20) }

// pollUntil polls cond every 100 ms until it holds (true) or within has
// passed (false).
func pollUntil(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond) // poll interval of an eventual check
	}
	return true
}

// settledVia is settled with the statuses read through api (the
// coordinator process) rather than c.api.
func (c *cluster) settledVia(api *client.Client, jobs []string, within time.Duration) map[string]*c2clusterv1.JobStatus {
	c.t.Helper()
	saved := c.api
	c.api = api
	defer func() { c.api = saved }()
	return c.settled(jobs, within)
}
