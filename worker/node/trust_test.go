package node_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/node/nodetest"
)

// otherSetup writes a second, self-consistent parameter set of the test
// shape from another setup (another seed: other toxic waste) and returns
// its folder: a worker proves and self-verifies with it, but its proofs do
// not verify with the coordinator's .vk.
func otherSetup(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(paramsDir, "other-setup")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	poreptest.Params(t, dir, testShape, "worker node tests: another setup")
	return dir
}

// noKeys is the real PoRep proof system without its KeyFingerprint: the
// coordinator publishes no key fingerprints, so a worker's key of another
// setup is caught only when its proofs fail verification at assembly.
type noKeys struct{ server.ProofSystem }

// newTrustCluster is newCluster with the coordinator's trust settings and
// proof system given.
func newTrustCluster(t *testing.T, qcfg queue.Config, trust server.TrustConfig, ps server.ProofSystem) *cluster {
	t.Helper()
	params(t)
	ns := queuetest.Server(t)
	nc := queuetest.Conn(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	if qcfg.NakDelay == 0 {
		qcfg.NakDelay = 100 * time.Millisecond
	}
	if qcfg.AckWait == 0 {
		qcfg.AckWait = 5 * time.Second
	}
	q, err := queue.Open(ctx, nc, qcfg)
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: 200 * time.Millisecond})
	require.NoError(t, err)
	log := nodetest.Logger(t)
	srv, err := server.New(server.Config{Logger: log, Trust: trust,
		Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}}, q, store, ps)
	require.NoError(t, err)
	require.NoError(t, srv.Start(ctx))
	t.Cleanup(srv.Stop)
	return &cluster{t: t, ctx: ctx, q: q, nc: nc, store: store, srv: srv, log: log}
}

func (c *cluster) workerInfo(id string) *c2clusterv1.WorkerInfo {
	c.t.Helper()
	res, err := c.srv.Status(c.ctx, connect.NewRequest(&c2clusterv1.StatusRequest{}))
	require.NoError(c.t, err)
	for _, w := range res.Msg.Workers {
		if w.Id == id {
			return w
		}
	}
	return nil
}

// eventsOf returns the job's events of one type.
func (c *cluster) eventsOf(job, typ string) []jobstore.Event {
	c.t.Helper()
	evs, err := c.store.Events(c.ctx, job)
	require.NoError(c.t, err)
	var out []jobstore.Event
	for _, e := range evs {
		if e.Fields["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

func gauge(t *testing.T, srv *server.Server, name string) float64 {
	t.Helper()
	mfs, err := srv.Metrics().Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// A worker whose parameters come from another setup is quarantined when it
// registers, before it proves anything: its key fingerprint is not the one
// the coordinator published. The job is proved by a good worker; a release
// does not let the worker back in while its key still differs.
func TestWorkerWithKeyOfAnotherSetupIsQuarantined(t *testing.T) {
	other := otherSetup(t)
	c := newTrustCluster(t, queue.Config{}, server.TrustConfig{KeyInterval: 100 * time.Millisecond}, &server.PoRep{ParamsDir: paramsDir})
	require.Eventually(t, func() bool {
		keys, err := c.store.CoordinatorKeys(c.ctx, []string{testShape})
		return err == nil && keys[testShape].Fingerprint != ""
	}, time.Minute, 20*time.Millisecond, "the coordinator publishes its key fingerprint")
	want := params(t).VK.Fingerprint()
	keys, err := c.store.CoordinatorKeys(c.ctx, []string{testShape})
	require.NoError(t, err)
	require.Equal(t, want, keys[testShape].Fingerprint)

	bad := c.startWorker(nodetest.CPUConfig("w-other-setup", testShape, other))
	q := bad.Quarantine()
	require.NotNil(t, q, "told at registration")
	require.Equal(t, "worker", q.By)
	require.Contains(t, q.Reason, want)
	require.Contains(t, q.Reason, bad.KeyFingerprints()[0].Fingerprint)
	require.NotEqual(t, want, bad.KeyFingerprints()[0].Fingerprint)

	doc := sealedC1(t, 41)
	job := c.submit(doc)
	good := c.startWorker(workerConfig("w-good"))
	require.Nil(t, good.Quarantine())
	j := c.waitJob(job, jobstore.StateDone, jobstore.StateFailed)
	requireValidProof(t, doc, j)
	for _, e := range append(c.eventsOf(job, "begin"), c.eventsOf(job, "complete")...) {
		require.Equal(t, "w-good", e.Fields["worker"], "the quarantined worker took no partition")
	}
	require.Empty(t, c.eventsOf(job, "bad_proof"))

	// The status shows it, with its key; the gauge counts it.
	wi := c.workerInfo("w-other-setup")
	require.NotNil(t, wi)
	require.NotNil(t, wi.Quarantine)
	require.Equal(t, q.Reason, wi.Quarantine.Reason)
	require.Equal(t, bad.KeyFingerprints()[0].Fingerprint, wi.Keys[0].Fingerprint)
	require.Nil(t, c.workerInfo("w-good").Quarantine)
	require.Eventually(t, func() bool { return gauge(t, c.srv, "c2_workers_quarantined") == 1 }, time.Minute, 20*time.Millisecond)

	// Released while its key still differs: the coordinator quarantines it
	// again at once.
	res, err := c.srv.ReleaseWorker(c.ctx, connect.NewRequest(&c2clusterv1.ReleaseWorkerRequest{WorkerId: "w-other-setup"}))
	require.NoError(t, err)
	require.True(t, res.Msg.Released)
	tr, err := c.store.Trust(c.ctx, "w-other-setup")
	require.NoError(t, err)
	require.NotNil(t, tr.Quarantine)
	// The coordinator's check in ReleaseWorker, or the worker's own at a
	// heartbeat in between.
	require.Contains(t, []string{"coordinator", "worker"}, tr.Quarantine.By)
	require.Contains(t, tr.Quarantine.Reason, want)
}

// A worker whose bad proofs escape the key check (the coordinator publishes
// no fingerprints) makes every partition of a job; the assembler verifies
// each partition, re-queues the bad ones excluding that worker (which hands
// them back), and a good worker completes the job. The bad proofs are
// counted on the worker; an operator's quarantine and release reach it.
func TestBadPartitionProofsAreRequeuedToAnotherWorker(t *testing.T) {
	other := otherSetup(t)
	c := newTrustCluster(t, queue.Config{MaxDeliver: 200}, server.TrustConfig{QuarantineAfter: 3, KeyInterval: 100 * time.Millisecond},
		noKeys{&server.PoRep{ParamsDir: paramsDir}})
	badCfg := nodetest.CPUConfig("w-other-setup", testShape, other)
	badCfg.RetryDelay = 300 * time.Millisecond
	bad := c.startWorker(badCfg)
	doc := sealedC1(t, 42)
	job := c.submit(doc)

	// Every partition is proved by the bad worker, rejected at assembly and
	// re-queued (round 1) with the bad worker excluded.
	require.Eventually(t, func() bool { return len(c.eventsOf(job, "requeue")) == 1 }, 3*time.Minute, 20*time.Millisecond)
	bads := c.eventsOf(job, "bad_proof")
	require.Len(t, bads, 2)
	for _, e := range bads {
		require.Equal(t, "w-other-setup", e.Fields["worker"])
		require.Contains(t, e.Fields["message"], "does not verify with the coordinator's verifying key")
	}
	j, err := c.store.Get(c.ctx, job)
	require.NoError(t, err)
	require.Contains(t, []jobstore.State{jobstore.StateProving}, j.State)
	excluded := bad.Config().Metrics.FailuresTotal.WithLabelValues("partition", "excluded")
	require.Eventually(t, func() bool { return testutil.ToFloat64(excluded) >= 1 }, time.Minute, 20*time.Millisecond,
		"the excluded worker hands the re-queued tasks back")

	good := c.startWorker(workerConfig("w-good"))
	j = c.waitJob(job, jobstore.StateDone, jobstore.StateFailed)
	requireValidProof(t, doc, j)
	completes := c.eventsOf(job, "complete")
	require.Len(t, completes, 4)
	for _, e := range completes[2:] {
		require.Equal(t, "w-good", e.Fields["worker"])
	}
	tr, err := c.store.Trust(c.ctx, "w-other-setup")
	require.NoError(t, err)
	require.Equal(t, 2, tr.BadProofs)
	require.Nil(t, tr.Quarantine, "2 bad proofs, quarantine after 3")
	require.Nil(t, good.Quarantine())

	// An operator's quarantine reaches the worker at its next heartbeat;
	// the release too.
	_, err = c.srv.QuarantineWorker(c.ctx, connect.NewRequest(&c2clusterv1.QuarantineWorkerRequest{WorkerId: "w-other-setup", Reason: "bad GPU"}))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return bad.Quarantine() != nil }, time.Minute, 20*time.Millisecond)
	require.Equal(t, "bad GPU", bad.Quarantine().Reason)
	require.Equal(t, "operator", c.workerInfo("w-other-setup").Quarantine.By)
	res, err := c.srv.ReleaseWorker(c.ctx, connect.NewRequest(&c2clusterv1.ReleaseWorkerRequest{WorkerId: "w-other-setup"}))
	require.NoError(t, err)
	require.True(t, res.Msg.Released)
	require.Eventually(t, func() bool { return bad.Quarantine() == nil }, time.Minute, 20*time.Millisecond)
	require.Zero(t, c.workerInfo("w-other-setup").BadProofs, "a release clears the count")
}

// Bad proofs of one partition from MaxBadProofs workers fail the job, with
// a reason naming the partition and the workers; after QuarantineAfter bad
// proofs a worker is quarantined and stops taking work.
func TestJobFailsAfterBoundedBadProofsNamingWorkers(t *testing.T) {
	other := otherSetup(t)
	c := newTrustCluster(t, queue.Config{MaxDeliver: 200}, server.TrustConfig{MaxBadProofs: 2, QuarantineAfter: 2, KeyInterval: 100 * time.Millisecond},
		noKeys{&server.PoRep{ParamsDir: paramsDir}})
	bad1 := c.startWorker(nodetest.CPUConfig("w-bad-1", testShape, other))
	doc := sealedC1(t, 43)
	job := c.submit(doc)
	require.Eventually(t, func() bool { return len(c.eventsOf(job, "requeue")) == 1 }, 3*time.Minute, 20*time.Millisecond)
	// Two bad proofs: quarantined, it fetches nothing more.
	require.Eventually(t, func() bool { return bad1.Quarantine() != nil }, time.Minute, 20*time.Millisecond)
	require.Equal(t, "coordinator", bad1.Quarantine().By)
	require.Contains(t, bad1.Quarantine().Reason, "2 partition proofs failed verification")

	c.startWorker(nodetest.CPUConfig("w-bad-2", testShape, other))
	j := c.waitJob(job, jobstore.StateDone, jobstore.StateFailed)
	require.Equal(t, jobstore.StateFailed, j.State)
	require.Contains(t, j.Reason, "2 proofs failed verification (workers w-bad-1, w-bad-2)")
	require.Regexp(t, `partition [01]: 2 proofs failed verification`, j.Reason)
	for _, e := range c.eventsOf(job, "begin")[2:] {
		require.Equal(t, "w-bad-2", e.Fields["worker"], "the quarantined worker took nothing more")
	}
}
