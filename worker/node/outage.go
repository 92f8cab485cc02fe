package node

import (
	"context"
	"fmt"
	"time"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

// OutageHoldDefault is how long a slot holds a partition (its JetStream
// lease kept alive by InProgress heartbeats) while Redis or NATS is
// unreachable, before it hands the partition back as a transient failure.
const OutageHoldDefault = 30 * time.Minute

// outagePoll is the pause between reachability checks during an outage.
const outagePoll = 500 * time.Millisecond

// dependency says whether a dependency answers: nil when it does.
type dependency struct {
	name  string
	check func(context.Context) error
}

func (n *Node) redis() dependency {
	jobstore.QuietClientLog()
	return dependency{telemetry.DepRedis, func(ctx context.Context) error { return n.store.Client().Ping(ctx).Err() }}
}

func (n *Node) nats() dependency {
	return dependency{telemetry.DepNATS, n.q.Reachable}
}

// reachable checks dep with a short deadline and records the answer.
func (n *Node) reachable(ctx context.Context, dep dependency) bool {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := dep.check(cctx)
	if err != nil && ctx.Err() != nil {
		return false // our own cancellation, not the dependency
	}
	n.deps.Set(dep.name, err == nil, err, "holding partitions until it returns")
	return err == nil
}

// ride runs op and rides out an outage of dep: when op fails and dep does
// not answer, the partition is held (the slot's InProgress heartbeats keep
// its lease; no delivery is spent) until dep answers again, then op runs
// again. An error while dep answers is op's own and is returned as it is;
// so is the last error once ctx ends or the outage outlasts
// Config.OutageHold. op must be safe to repeat (every job-store call of a
// partition is: Begin and Complete are fenced by the attempt).
func (n *Node) ride(ctx context.Context, dep dependency, op func(context.Context) error) error {
	var deadline time.Time
	for {
		err := op(ctx)
		if err == nil {
			if deadline.IsZero() {
				return nil
			}
			n.deps.Set(dep.name, true, nil, "")
			return nil
		}
		if ctx.Err() != nil || n.reachable(ctx, dep) {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(n.cfg.OutageHold)
		}
		for !n.reachable(ctx, dep) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s unreachable for longer than %v: %w", dep.name, n.cfg.OutageHold, err)
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(outagePoll):
			}
		}
	}
}
