package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Two worker processes prove one job's two partitions, one each: each holds
// its partition until both have begun, so neither can take both.
func TestTwoWorkerProcessesProveOneJob(t *testing.T) {
	c := newCluster(t, queue.Config{})
	c.startWorker("proc-a", "hold-until-begun:2")
	c.startWorker("proc-b", "hold-until-begun:2")
	doc := sealedC1(t, 101)
	job := c.submit(doc)
	j := c.await(job)
	requireValidProof(t, doc, j)
	by := c.completedBy(job)
	require.Len(t, by, 2)
	require.ElementsMatch(t, []string{"proc-a", "proc-b"}, []string{by["0"], by["1"]},
		"each process proved one partition")
}

// A worker process SIGKILLed in the middle of a partition: JetStream
// redelivers the partition after AckWait to another worker process, the
// job completes and its proof is valid.
func TestKilledWorkerPartitionIsRedelivered(t *testing.T) {
	c := newCluster(t, queue.Config{AckWait: 3 * time.Second})
	victim := c.startWorker("proc-victim", "block:prove")
	doc := sealedC1(t, 102)
	job := c.submit(doc)
	var held string
	c.waitFor("the victim to hold a partition", func() bool {
		if w := c.registered("proc-victim"); w != nil && len(w.Current) == 1 {
			held = w.Current[0]
			return true
		}
		return false
	})
	victim.signal(t, syscall.SIGKILL)
	require.Equal(t, -1, victim.wait(t), "killed by the signal")

	c.startWorker("proc-rescuer", "")
	j := c.await(job)
	requireValidProof(t, doc, j)
	by := c.completedBy(job)
	require.Equal(t, "proc-rescuer", by["0"])
	require.Equal(t, "proc-rescuer", by["1"])
	_, part, err := queue.ParseMsgID(held)
	require.NoError(t, err)
	attempt, err := c.store.Attempt(c.ctx, job, part)
	require.NoError(t, err)
	require.GreaterOrEqual(t, attempt, 2, "the killed worker's partition was delivered again")
}

// SIGTERM drains a worker process: it stops fetching, finishes the
// partition it holds, unregisters and exits 0; the other partition is left
// for another worker.
func TestSIGTERMDrainsWorkerProcess(t *testing.T) {
	c := newCluster(t, queue.Config{})
	release := filepath.Join(t.TempDir(), "release")
	w := c.startWorker("proc-drain", "block-until-file:prove:"+release)
	doc := sealedC1(t, 103)
	job := c.submit(doc)
	var held string
	c.waitFor("the worker to hold a partition", func() bool {
		if r := c.registered("proc-drain"); r != nil && len(r.Current) == 1 {
			held = r.Current[0]
			return true
		}
		return false
	})
	w.signal(t, syscall.SIGTERM)
	c.waitFor("the worker to log its drain", func() bool {
		return strings.Contains(w.out.String(), "draining")
	})
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	require.Equal(t, 0, w.wait(t), "a drained worker exits 0:\n%s", w.out.String())
	require.Nil(t, c.registered("proc-drain"), "a drained worker unregisters")

	_, part, err := queue.ParseMsgID(held)
	require.NoError(t, err)
	proofs, err := c.store.Proofs(c.ctx, job, 2)
	require.NoError(t, err)
	require.NotNil(t, proofs[part], "the held partition finished during the drain")
	other, err := c.store.Attempt(c.ctx, job, 1-part)
	require.NoError(t, err)
	require.Zero(t, other, "a draining worker fetches nothing new")

	c.startWorker("proc-next", "")
	j := c.await(job)
	requireValidProof(t, doc, j)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, j.State)
}
