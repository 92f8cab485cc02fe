package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// ErrExcluded: the task names this worker among those that must not prove
// it (its earlier proof of the partition failed the coordinator's
// verification). The task is handed back for another worker.
var ErrExcluded = errors.New("node: worker excluded from this task")

// ErrQuarantined: the worker is quarantined and takes no work; a task it
// fetched before it learnt so is handed back at once.
var ErrQuarantined = errors.New("node: worker quarantined")

// trustState is the worker's side of proof trust: the fingerprints of its
// proving keys (registered with every heartbeat) and its quarantine as last
// read from the job store.
type trustState struct {
	keysOnce sync.Once
	keys     []jobstore.KeyFingerprint

	mu         sync.Mutex
	quarantine *jobstore.Quarantine
}

// KeyFingerprints are the fingerprints of the verifying keys of the
// parameters the worker loaded, one per shape (registered with the worker,
// compared with the coordinator's).
func (n *Node) KeyFingerprints() []jobstore.KeyFingerprint {
	n.trust.keysOnce.Do(func() {
		for _, name := range n.cfg.Shapes {
			if sp, ok := n.prover.shapes[name]; ok {
				n.trust.keys = append(n.trust.keys, jobstore.KeyFingerprint{Shape: name, Fingerprint: sp.VerifyingKey().Fingerprint()})
			}
		}
	})
	return n.trust.keys
}

// Quarantine is the worker's quarantine as it last read it (nil: not
// quarantined). A quarantined worker's slots fetch nothing until an
// operator releases it.
func (n *Node) Quarantine() *jobstore.Quarantine {
	n.trust.mu.Lock()
	defer n.trust.mu.Unlock()
	return n.trust.quarantine
}

func (n *Node) paused() bool { return n.Quarantine() != nil }

// checkTrust reads the worker's quarantine and compares its proving keys
// with the verifying keys the coordinator published: a key of another
// setup quarantines the worker at once (before it proves anything). It runs
// at registration, with every heartbeat and before every task. Errors
// reading the store are returned; the last known state stays.
func (n *Node) checkTrust(ctx context.Context) error {
	t, err := n.store.Trust(ctx, n.cfg.ID)
	if err != nil {
		return err
	}
	q := t.Quarantine
	if q == nil {
		keys, err := n.store.CoordinatorKeys(ctx, n.cfg.Shapes)
		if err != nil {
			return err
		}
		for _, k := range n.KeyFingerprints() {
			ck, ok := keys[k.Shape]
			if !ok || ck.Fingerprint == k.Fingerprint {
				continue
			}
			if q, _, err = n.store.Quarantine(ctx, n.cfg.ID, jobstore.KeyMismatchReason(k.Shape, k.Fingerprint, ck), "worker"); err != nil {
				return err
			}
			break
		}
	}
	n.trust.mu.Lock()
	was := n.trust.quarantine
	n.trust.quarantine = q
	n.trust.mu.Unlock()
	switch {
	case q != nil && was == nil:
		n.cfg.Metrics.FailuresTotal.WithLabelValues("worker", "quarantined").Inc()
		n.log.Error("worker: quarantined: taking no work until an operator releases it (coordinator workers release "+n.cfg.ID+")",
			slog.String("reason", q.Reason), slog.String("by", q.By))
	case q == nil && was != nil:
		n.log.Info("worker: released from quarantine: taking work again", slog.String("was", was.Reason))
	}
	return nil
}

// logTrust is checkTrust for the heartbeat: errors are logged.
func (n *Node) logTrust(ctx context.Context) {
	if err := n.checkTrust(ctx); err != nil && ctx.Err() == nil {
		n.log.Warn("worker: reading the quarantine and the coordinator's keys", slog.Any("err", err))
	}
}

// trustGate runs before a task's Begin: a task that excludes this worker is
// handed back after RetryDelay, and a quarantined worker hands every task
// back at once (its slots stop fetching).
func (n *Node) trustGate(ctx context.Context, t *c2clusterv1.PartitionTask) error {
	if queue.Excludes(t, n.cfg.ID) {
		return queue.Retry(fmt.Errorf("%w: %s: this worker's earlier proof of the partition failed the coordinator's verification; handing it back for another worker",
			ErrExcluded, queue.TaskMsgID(t)), n.cfg.RetryDelay)
	}
	if err := n.checkTrust(ctx); err != nil {
		return err
	}
	if q := n.Quarantine(); q != nil {
		return queue.Retry(fmt.Errorf("%w (%s); handing %s back", ErrQuarantined, q.Reason, queue.TaskMsgID(t)), time.Millisecond)
	}
	return nil
}
