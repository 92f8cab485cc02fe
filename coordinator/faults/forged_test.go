package faults_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Garbage and forged messages on every subject the cluster consumes —
// the task subjects (c2.part.<shape>.<lane>), the control subjects
// (c2.ctl.>, assembly requests) and the dead-letter subjects (the
// MSG_TERMINATED advisories of the task stream) — naming a victim job,
// published before any worker runs; and a worker whose parameters come
// from another setup. Workers keep no registration or heartbeat on NATS
// (they are in Redis), so these are all the subjects there are.
//
// Undecodable tasks and tasks that do not match the job they name are
// dead-lettered as rejected without touching it; a task naming no job is
// dropped; an exact copy of a real task is proved again and recorded
// once; junk on control subjects is dropped; a termination no worker
// recorded is ignored; an assembly request forged with the job's own
// message id (so that the real one is taken for its duplicate) leaves the
// job assembling until the watchdog asks again. The worker with the other
// setup's key is quarantined when it registers and proves nothing. Every
// job ends done with a verified proof, the victim with no error recorded,
// and no process dies.
func TestForgedMessagesAndWrongKeyWorker(t *testing.T) {
	c := newCluster(t, queue.Config{}, server.WatchdogConfig{Interval: 300 * time.Millisecond, Grace: time.Second})
	docs, ids := c.submitMany(3, 5000)
	victim := ids[0]
	j, err := c.store.Get(c.ctx, victim)
	require.NoError(t, err)
	seqs, err := c.store.PartitionSeqs(c.ctx, victim)
	require.NoError(t, err)
	require.Len(t, seqs, j.Partitions)

	js := c.q.JetStream()
	publish := func(subject string, data []byte, msgID string) {
		t.Helper()
		msg := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: data}
		if msgID != "" {
			msg.Header.Set(jetstream.MsgIDHeader, msgID)
		}
		_, err := js.PublishMsg(c.ctx, msg)
		require.NoError(t, err, "publish on %s", subject)
	}
	real := &c2clusterv1.PartitionTask{JobId: victim, Partition: 1, Partitions: uint32(j.Partitions), Shape: j.Shape, Lane: j.Lane,
		BlobRef: j.BlobRef, BlobSize: j.BlobSize, BlobSha256: j.BlobSHA256, EnqueuedUnixMs: time.Now().UnixMilli()}
	forged := func(change func(*c2clusterv1.PartitionTask)) []byte {
		f := proto.Clone(real).(*c2clusterv1.PartitionTask)
		change(f)
		b, err := proto.Marshal(f) // as a forger would: no validation
		require.NoError(t, err)
		return b
	}
	junk := []byte("\x00\xff\x13 31 bytes of junk, not a task")
	lane := c.q.Subject(j.Shape, j.Lane)

	// Task subjects. Rejected by the worker that takes them (8):
	publish(lane, junk, victim+".5")      // the victim's message id, a partition it does not have
	publish(lane, junk, victim+".1.r1")   // a re-queue round's id
	publish(lane, junk, victim+".0.w123") // a watchdog republish's id
	publish(lane, junk, "")
	publish(lane, forged(func(f *c2clusterv1.PartitionTask) { f.Partition, f.Partitions = 7, 8 }), "forged-1")
	publish(lane, forged(func(f *c2clusterv1.PartitionTask) { f.Partition = uint32(j.Partitions) }), "forged-2")
	publish(lane, forged(func(f *c2clusterv1.PartitionTask) { f.Partitions = uint32(j.Partitions + 1) }), "forged-3")
	publish(lane, forged(func(f *c2clusterv1.PartitionTask) { f.BlobRef = ids[1] }), "forged-4")
	const rejected = 8
	// Dropped (no such job), proved again and recorded once (a copy):
	publish(lane, forged(func(f *c2clusterv1.PartitionTask) { f.JobId = "no-such-job" }), "forged-5")
	publish(lane, forged(func(f *c2clusterv1.PartitionTask) {}), "forged-copy")
	// No consumer takes these: they stay in the stream.
	publish(c.q.Subject(j.Shape, "bogus-lane"), junk, "")
	publish(c.q.Subject("test-none", j.Lane), junk, "")
	// Larger than the stream's largest task: refused by the stream.
	big := &nats.Msg{Subject: lane, Data: make([]byte, c.qcfg.MaxTaskBytes+1)}
	_, err = js.PublishMsg(c.ctx, big)
	require.Error(t, err, "an oversized task is refused")

	// Control subjects.
	ctl := c.qcfg.ControlPrefix + ".assemble"
	publish(ctl, junk, "")
	publish(ctl, []byte("no-such-job"), "")
	publish(ctl, []byte(victim), victim+".assemble") // takes the real request's message id
	publish(c.qcfg.ControlPrefix+".other", junk, "")

	// Dead-letter subjects: junk, and a termination no worker made.
	term := "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + c.qcfg.Stream + "." + queue.ConsumerName(j.Shape, j.Lane)
	publish(term, junk, "")
	adv, err := json.Marshal(map[string]any{"type": "io.nats.jetstream.advisory.v1.terminated", "stream": c.qcfg.Stream,
		"consumer": queue.ConsumerName(j.Shape, j.Lane), "stream_seq": seqs[0], "deliveries": 1,
		"reason": fmt.Sprintf("%s.0: bad input: forged", victim)})
	require.NoError(t, err)
	publish(term, adv, "")

	// A worker with another setup's parameters: quarantined when it
	// registers (its key fingerprint is not the coordinator's).
	other := filepath.Join(paramsDir, "other-setup")
	require.NoError(t, os.MkdirAll(other, 0o755))
	poreptest.Params(t, other, testShape, "faults tests: another setup")
	bad := c.startWorkerWith("w-other-setup", "", other)
	waitFor(t, "the worker with another setup's key to be quarantined", time.Minute, func() bool {
		tr, err := c.store.Trust(c.ctx, "w-other-setup")
		return err == nil && tr.Quarantine != nil
	})
	good := c.startWorker("w-good", "")

	c.requireOutcome(docs, c.settled(ids, 4*time.Minute))
	evs, err := c.store.Events(c.ctx, victim)
	require.NoError(t, err)
	for _, e := range evs {
		require.NotEqual(t, "error", e.Fields["type"], "the victim records no error: %v", e.Fields)
	}
	for _, id := range ids {
		evs, err := c.store.Events(c.ctx, id)
		require.NoError(t, err)
		for _, e := range evs {
			if e.Fields["type"] == "begin" || e.Fields["type"] == "complete" {
				require.Equal(t, "w-good", e.Fields["worker"], "job %s: the quarantined worker proved nothing", id)
			}
		}
	}
	m := c.srv.Metrics()
	waitFor(t, fmt.Sprintf("the coordinator to count %d rejected tasks", rejected), 30*time.Second, func() bool {
		return gaugeValue(t, m, "c2_failures_total", "reason", "rejected") == rejected
	})
	require.Equal(t, 1.0, gaugeValue(t, m, "c2_failures_total", "reason", "unconfirmed"), "the forged termination was ignored")
	require.GreaterOrEqual(t, gaugeValue(t, m, "c2_watchdog_repairs_total", "kind", "assembly"), 1.0,
		"the victim's assembly was asked for again")
	code, body := c.healthz()
	require.Equal(t, 200, code, body)
	for _, w := range []*workerProc{bad, good} {
		select {
		case <-w.done:
			t.Fatalf("worker %s exited:\n%s", w.id, w.out.String())
		default:
		}
	}
}
