package faults_test

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// submitMany submits n sealed C1 outputs (seeds from seed on) and returns
// them by job id, with the ids in submission order.
func (c *cluster) submitMany(n int, seed uint64) (map[string][]byte, []string) {
	c.t.Helper()
	docs := map[string][]byte{}
	var ids []string
	for i := range n {
		doc := poreptest.SealedC1(c.t, testShape, seed+uint64(i))
		id := c.submit(doc)
		docs[id] = doc
		ids = append(ids, id)
	}
	return docs, ids
}

func (c *cluster) doneCount(ids []string) int {
	n := 0
	for _, id := range ids {
		if st, err := c.store.JobState(c.ctx, id); err == nil && st == jobstore.StateDone {
			n++
		}
	}
	return n
}

// Redis and NATS outages in the middle of one 20-job run. Redis first: the
// server SIGKILLed and started again after 60 s (5 min with
// C2_FAULTS_LONG=1) on the same port from its append-only file; workers
// hold their partitions (no delivery spent), keep proofs finished
// meanwhile and record them when Redis is back. Then NATS, with the jobs
// that are left: stopped and started again at once (a restart), then
// stopped for 5 s; JetStream's streams, consumers and pending deliveries
// survive on disk and the clients reconnect by themselves. During each
// outage the coordinator's /healthz answers 503 naming the dependency and
// c2_dependency_up is 0 for it; a submission while NATS is down is
// refused and stores nothing. Every job ends done with a verified proof,
// no partition runs out of deliveries, and each process says once per
// outage that a dependency is unreachable.
func TestRedisAndNATSOutagesDuringTwentyJobs(t *testing.T) {
	outage := 60 * time.Second
	if os.Getenv("C2_FAULTS_LONG") == "1" {
		outage = 5 * time.Minute
	}
	c := newCluster(t, queue.Config{}, server.WatchdogConfig{Interval: time.Second})
	docs, ids := c.submitMany(20, 1000)
	a := c.startWorker("w-a", "")
	b := c.startWorker("w-b", "")
	waitFor(t, "a few jobs to finish", 3*time.Minute, func() bool { return c.doneCount(ids) >= 2 })
	before := c.doneCount(ids)
	require.Less(t, before, len(ids), "the outage must come while jobs are in flight")

	c.redis.kill()
	down := time.Now()
	waitFor(t, "/healthz to answer 503 naming redis", 20*time.Second, func() bool {
		code, body := c.healthz()
		return code == 503 && strings.Contains(body, "redis")
	})
	require.Equal(t, 0.0, c.dependencyUp(telemetry.DepRedis))
	require.Equal(t, 1.0, c.dependencyUp(telemetry.DepNATS))
	time.Sleep(outage - time.Since(down)) // the outage itself
	c.redis.start()
	t.Logf("Redis down for %v with %d/%d jobs done", time.Since(down).Round(time.Second), before, len(ids))

	// A NATS restart once a job has finished since Redis came back.
	waitFor(t, "a job to finish after Redis is back", 3*time.Minute, func() bool { return c.doneCount(ids) > before })
	c.nats.stop()
	c.nats.start()
	restarted := c.doneCount(ids)
	waitFor(t, "a job to finish after the NATS restart", 3*time.Minute, func() bool { return c.doneCount(ids) > restarted })

	// A NATS outage.
	before = c.doneCount(ids)
	require.Less(t, before, len(ids), "the NATS outage must come while jobs are in flight")
	c.nats.stop()
	down = time.Now()
	waitFor(t, "/healthz to answer 503 naming nats", 10*time.Second, func() bool {
		code, body := c.healthz()
		return code == 503 && strings.Contains(body, "nats")
	})
	detected := time.Since(down)
	require.Equal(t, 0.0, c.dependencyUp(telemetry.DepNATS))
	require.Equal(t, 1.0, c.dependencyUp(telemetry.DepRedis))
	sctx, cancel := context.WithTimeout(c.ctx, 2*time.Second)
	_, err := c.api.Submit(sctx, &c2clusterv1.SubmitRequest{C1Json: poreptest.SealedC1(t, testShape, 1100)})
	cancel()
	require.Error(t, err, "a submission while NATS is down is refused")
	time.Sleep(natsOutage - time.Since(down)) // the outage itself
	c.nats.start()
	up := time.Now()
	waitFor(t, "/healthz to answer 200 after NATS is back", 20*time.Second, func() bool {
		code, _ := c.healthz()
		return code == 200
	})
	t.Logf("NATS down %v with %d/%d jobs done: /healthz said so after %v, answered 200 %v after NATS was back",
		natsOutage, before, len(ids), detected.Round(10*time.Millisecond), time.Since(up).Round(10*time.Millisecond))
	require.Equal(t, 1.0, c.dependencyUp(telemetry.DepNATS))

	// The refused submission stored nothing: the store holds the 20 jobs.
	st := c.settled(ids, 8*time.Minute) // generous: 20 test-micro jobs on 2 busy cores
	c.requireOutcome(docs, st)
	code, body := c.healthz()
	require.Equal(t, 200, code, body)
	require.Equal(t, 1.0, c.dependencyUp(telemetry.DepRedis))
	for _, w := range []*workerProc{a, b} {
		n := strings.Count(w.out.String(), "redis is unreachable")
		require.GreaterOrEqual(t, n, 1, "worker %s says Redis is down", w.id)
		require.LessOrEqual(t, n, 3, "worker %s says so once per outage, not once per retry", w.id)
	}
	require.LessOrEqual(t, gaugeValue(t, c.srv.Metrics(), "c2_failures_total", "reason", "max_deliver"), 0.0,
		"no partition ran out of deliveries")
	// The coordinator says once per outage that a dependency is down (the
	// NATS restart too, when a check fell in it); its assembler and
	// dead-letter loops say that their fetches or messages fail once per
	// loop and outage, not once per retry.
	log := c.logs.String()
	require.Equal(t, 1, strings.Count(log, "redis is unreachable"), "coordinator log")
	n := strings.Count(log, "nats is unreachable")
	require.GreaterOrEqual(t, n, 1, "coordinator log")
	require.LessOrEqual(t, n, 2, "coordinator log")
	require.LessOrEqual(t, strings.Count(log, "queue: control message failed"), 6, "coordinator log")
	require.LessOrEqual(t, strings.Count(log, "queue: fetch failed"), 4, "coordinator log")
}

// natsOutage is how long TestRedisAndNATSOutagesDuringTwentyJobs keeps
// NATS down.
const natsOutage = 5 * time.Second

// A worker SIGKILLed in the middle of a partition: the partition goes back
// to the queue when its lease (AckWait, default 15 s, kept alive by the
// dead worker's heartbeats no longer) runs out, another worker proves it,
// the job is done.
func TestKilledWorkerPartitionBackWithinSeconds(t *testing.T) {
	c := newCluster(t, queue.Config{}, server.WatchdogConfig{Interval: time.Second})
	docs, ids := c.submitMany(1, 2000)
	victim := c.startWorker("w-victim", "block:"+"prove")
	var held string
	waitFor(t, "the victim to hold a partition", time.Minute, func() bool {
		if w := c.registered("w-victim"); w != nil && len(w.Current) == 1 {
			held = w.Current[0]
			return true
		}
		return false
	})
	_, part, err := queue.ParseMsgID(held)
	require.NoError(t, err)
	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	<-victim.done
	killed := time.Now()
	c.startWorker("w-rescuer", "")
	waitFor(t, "the partition to be delivered again", 3*c.qcfg.AckWait, func() bool {
		a, err := c.store.Attempt(c.ctx, ids[0], part)
		return err == nil && a >= 2
	})
	back := time.Since(killed)
	t.Logf("partition %d back to a worker %v after the SIGKILL (AckWait %v)", part, back.Round(100*time.Millisecond), c.qcfg.AckWait)
	// Redelivered by the AckWait (15 s), not the old 60 s one; the margin
	// covers a loaded 2-core CI machine's idle poll and worker start.
	require.Less(t, back, 3*c.qcfg.AckWait)
	c.requireOutcome(docs, c.settled(ids, 2*time.Minute))
}

// Tasks purged from the stream (an operator's purge, or MaxAge) leave
// their job queued: the coordinator's watchdog publishes them again and the
// job is done.
func TestPurgedTasksRecoveredByWatchdog(t *testing.T) {
	c := newCluster(t, queue.Config{}, server.WatchdogConfig{Interval: 300 * time.Millisecond, Grace: time.Second})
	docs, ids := c.submitMany(1, 3000)
	s, err := c.q.JetStream().Stream(c.ctx, c.qcfg.Stream)
	require.NoError(t, err)
	require.NoError(t, s.Purge(c.ctx))
	c.startWorker("w-a", "")
	st := c.settled(ids, 2*time.Minute)
	c.requireOutcome(docs, st)
	require.Equal(t, 2.0, gaugeValue(t, c.srv.Metrics(), "c2_watchdog_repairs_total", "kind", "republished"),
		"both partitions republished once")
}

// A worker SIGKILLed in the middle of a partition and started again under
// the same id (systemd's restart, a rescheduled pod) releases the delivery
// its predecessor held, recorded in its registration: the partition is
// proved again at once, not after the lease (AckWait, a minute here) runs
// out.
func TestWorkerRestartedUnderSameIDReleasesItsPartition(t *testing.T) {
	c := newCluster(t, queue.Config{AckWait: time.Minute}, server.WatchdogConfig{Interval: time.Second})
	docs, ids := c.submitMany(1, 2500)
	victim := c.startWorker("w-same", "block:"+"prove")
	var held string
	waitFor(t, "the worker to hold a partition and record its delivery", time.Minute, func() bool {
		if w := c.registered("w-same"); w != nil && len(w.Current) == 1 && len(w.Held) == 1 {
			held = w.Current[0]
			return true
		}
		return false
	})
	_, part, err := queue.ParseMsgID(held)
	require.NoError(t, err)
	victim.kill(t)
	killed := time.Now()
	c.startWorker("w-same", "")
	waitFor(t, "the partition to be delivered again", c.qcfg.AckWait, func() bool {
		a, err := c.store.Attempt(c.ctx, ids[0], part)
		return err == nil && a >= 2
	})
	back := time.Since(killed)
	t.Logf("partition %d back %v after the SIGKILL, the worker restarted under its id (AckWait %v)", part, back.Round(100*time.Millisecond), c.qcfg.AckWait)
	// The lease alone would hold it at least 3/4 of AckWait (45 s) after
	// the last heartbeat.
	require.Less(t, back, c.qcfg.AckWait/2)
	c.requireOutcome(docs, c.settled(ids, 2*time.Minute))
}
