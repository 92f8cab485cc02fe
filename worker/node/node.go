package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

// Node is a worker. Create it with New, run it with Start, end it with Stop.
type Node struct {
	cfg    Config
	q      *queue.Queue
	store  *jobstore.Store
	log    *slog.Logger
	prover *Prover
	inputs *inputCache

	mu        sync.Mutex
	started   bool
	stopped   bool
	current   map[string]string // slot → "<job>.<partition>"
	held      map[string]string // slot → its delivery's acknowledgement subject
	kick      chan struct{}     // a new delivery: heartbeat now
	slots     []*slotRunner
	stopFetch context.CancelFunc
	runWG     sync.WaitGroup
	hbStop    context.CancelFunc
	hbDone    chan struct{}
	trust     trustState // trust.go
	deps      *telemetry.Dependencies
}

// slotRunner is one slot: a queue Slot feeding a prover Slot.
type slotRunner struct {
	name string
	slot *Slot
	qs   *queue.Slot
	done chan struct{}
}

// New selects the backend, compiles the circuits and loads every shape's
// parameters onto every device. A missing or bad parameter file is an
// ErrParams error naming it. q and store stay owned by the caller.
func New(ctx context.Context, cfg Config, q *queue.Queue, store *jobstore.Store) (*Node, error) {
	if q == nil || store == nil {
		return nil, errors.New("node: New needs a queue and a job store")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	for _, l := range cfg.Lanes {
		if !q.Config().HasLane(l) {
			return nil, fmt.Errorf("node: Config.Lanes: lane %q is not one of the queue's %v", l, q.Config().Lanes)
		}
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = q.Config().NakDelay
	}
	sel, opts, err := selectBackend(&cfg)
	if err != nil {
		return nil, err
	}
	checker, err := subgroupChecker(cfg, sel, opts)
	if err != nil {
		return nil, err
	}
	shapes := make([]*ShapeParams, 0, len(cfg.Shapes))
	for _, name := range cfg.Shapes {
		sp, err := loadShape(ctx, cfg, name, checker)
		if err != nil {
			return nil, err
		}
		shapes = append(shapes, sp)
	}
	p, err := openProver(ctx, cfg, sel, opts, shapes)
	if err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, q: q, store: store, log: cfg.Logger, prover: p,
		inputs: newInputCache(cfg.InputCache), current: map[string]string{}, held: map[string]string{}, kick: make(chan struct{}, 1),
		deps: telemetry.NewDependencies(cfg.Metrics, cfg.Logger, telemetry.DepRedis, telemetry.DepNATS)}, nil
}

// ID is the worker's id.
func (n *Node) ID() string { return n.cfg.ID }

// Config returns the effective configuration.
func (n *Node) Config() Config { return n.cfg }

// Slots is the number of slots.
func (n *Node) Slots() int { return len(n.prover.devices) * n.cfg.GPUWorkersPerDevice }

// Start registers the worker and starts every slot and the heartbeat. The
// slots run until Stop.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	switch {
	case n.started:
		n.mu.Unlock()
		return errors.New("node: already started")
	case n.stopped:
		n.mu.Unlock()
		return errors.New("node: stopped")
	}
	n.mu.Unlock()
	prev := n.predecessorHeld(ctx)
	if err := n.heartbeat(ctx); err != nil {
		return fmt.Errorf("node: register: %w", err)
	}
	n.releasePredecessor(ctx, prev)
	var slots []*slotRunner
	for _, ps := range n.prover.Slots() {
		sr := &slotRunner{name: ps.Name(), slot: ps, done: make(chan struct{})}
		qs, err := n.q.NewSlot(queue.SlotConfig{
			Name:    sr.name,
			Shapes:  n.cfg.Shapes,
			Lanes:   n.cfg.Lanes,
			Handler: n.handler(sr),
			Logger:  n.log,
			Paused:  n.paused,
		})
		if err != nil {
			return fmt.Errorf("node: slot %s: %w", sr.name, err)
		}
		sr.qs = qs
		slots = append(slots, sr)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.started || n.stopped {
		return errors.New("node: started or stopped concurrently")
	}
	fetchCtx, stopFetch := context.WithCancel(context.WithoutCancel(ctx))
	n.stopFetch = stopFetch
	n.slots = slots
	for _, sr := range slots {
		n.runWG.Add(1)
		go func(sr *slotRunner) {
			defer n.runWG.Done()
			defer close(sr.done)
			if err := sr.qs.Run(fetchCtx); err != nil {
				n.log.Error("worker: slot stopped", "slot", sr.name, "err", err)
			}
		}(sr)
	}
	hbCtx, hbStop := context.WithCancel(context.WithoutCancel(ctx))
	n.hbStop, n.hbDone = hbStop, make(chan struct{})
	go n.heartbeatLoop(hbCtx)
	n.started = true
	n.log.Info("worker: started", "id", n.cfg.ID, "slots", len(slots), "devices", n.deviceNames(),
		"interlock", n.cfg.Interlock, "shapes", n.cfg.Shapes)
	return nil
}

// Stop drains the worker in two phases and releases its devices: slots stop
// fetching and in-flight partitions may finish within DrainTimeout; then
// the rest are aborted (handed back to the queue at once) and Stop waits up
// to AbortTimeout for them. ctx ending cuts phase one short. Stop
// unregisters the worker and returns an error when a slot did not return.
// It is safe to call more than once.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return nil
	}
	n.stopped = true
	started := n.started
	slots := n.slots
	n.mu.Unlock()
	if !started {
		n.prover.Close()
		return nil
	}

	n.log.Info("worker: draining: no more fetches", "in_flight", len(n.Current()), "soft_timeout", n.cfg.DrainTimeout)
	n.stopFetch()
	all := make(chan struct{})
	go func() { n.runWG.Wait(); close(all) }()
	soft := time.NewTimer(n.cfg.DrainTimeout)
	defer soft.Stop()
	var err error
	select {
	case <-all:
		n.log.Info("worker: drained: every in-flight partition finished")
	case <-soft.C:
	case <-ctx.Done():
	}
	select {
	case <-all:
	default:
		n.log.Warn("worker: drain timeout: aborting in-flight partitions (handed back to the queue)", "in_flight", n.Current())
		for _, sr := range slots {
			sr.qs.Abort()
		}
		hard := time.NewTimer(n.cfg.AbortTimeout)
		defer hard.Stop()
		select {
		case <-all:
		case <-hard.C:
			var stuck []string
			for _, sr := range slots {
				select {
				case <-sr.done:
				default:
					stuck = append(stuck, sr.name)
				}
			}
			err = fmt.Errorf("node: slots %v did not return within AbortTimeout %v", stuck, n.cfg.AbortTimeout)
		}
	}
	n.hbStop()
	<-n.hbDone
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if uerr := n.store.Unregister(uctx, n.cfg.ID); uerr != nil {
		n.log.Warn("worker: unregister", "err", uerr)
	}
	if err == nil {
		n.prover.Close()
	}
	n.log.Info("worker: stopped", "id", n.cfg.ID)
	return err
}

// Current lists the partitions in flight as "<job>.<partition>", sorted.
func (n *Node) Current() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.current))
	for _, v := range n.current {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func (n *Node) setCurrent(slot, id, reply string) {
	n.mu.Lock()
	if id == "" {
		delete(n.current, slot)
		delete(n.held, slot)
	} else {
		n.current[slot] = id
		if reply != "" {
			n.held[slot] = reply
		}
	}
	n.mu.Unlock()
	if id != "" {
		select { // record the delivery in the registration soon
		case n.kick <- struct{}{}:
		default:
		}
	}
}

// Held lists the acknowledgement subjects of the deliveries in flight.
func (n *Node) Held() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.held))
	for _, v := range n.held {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// predecessorHeld reads, before this worker's first registration replaces
// it, what a previous process under the same id held (nothing when there
// was none or Redis does not say).
func (n *Node) predecessorHeld(ctx context.Context) []string {
	ws, err := n.store.Workers(ctx)
	if err != nil {
		return nil
	}
	for _, w := range ws {
		if w.ID == n.cfg.ID {
			return w.Held
		}
	}
	return nil
}

// releasePredecessor hands the deliveries a previous process under the
// same id held back to the queue at once, instead of after AckWait: that
// process is gone (or, with two processes under one id, its results are
// fenced by attempt).
func (n *Node) releasePredecessor(ctx context.Context, held []string) {
	released := 0
	for _, reply := range held {
		if err := n.q.Release(ctx, reply); err != nil {
			n.log.Warn("worker: releasing a delivery of the previous process under this id", "err", err)
			continue
		}
		released++
	}
	if released > 0 {
		n.log.Info("worker: released the partitions the previous process under this id held", "released", released)
	}
}

func (n *Node) deviceNames() []string { return n.prover.DeviceNames() }

// registration is the worker's record in Redis now.
func (n *Node) registration() jobstore.Worker {
	w := jobstore.Worker{ID: n.cfg.ID, Host: n.cfg.Host, Devices: n.deviceNames(), Slots: n.Slots(),
		Current: n.Current(), Held: n.Held(), Version: n.cfg.Version, Keys: n.KeyFingerprints()}
	if len(n.prover.devices) > 0 {
		for _, name := range n.cfg.Shapes {
			w.Resident = append(w.Resident, jobstore.Resident{Shape: name, Residency: n.prover.Residency(name)})
		}
	}
	return w
}

func (n *Node) heartbeat(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, n.cfg.HeartbeatInterval+5*time.Second)
	defer cancel()
	if err := n.store.Heartbeat(hctx, n.registration()); err != nil {
		return err
	}
	n.logTrust(hctx) // quarantine and key check (trust.go)
	return nil
}

func (n *Node) heartbeatLoop(ctx context.Context) {
	defer close(n.hbDone)
	t := time.NewTicker(n.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.kick: // a new delivery: record it now
		}
		err := n.heartbeat(ctx)
		switch {
		case ctx.Err() != nil:
		case err == nil:
			n.deps.Set(telemetry.DepRedis, true, nil, "")
		case n.reachable(ctx, n.redis()):
			// Redis answers: the heartbeat's own failure (an outage is
			// logged once, by reachable).
			n.log.Warn("worker: heartbeat failed", "err", err)
		}
	}
}

// logWriter turns progress lines into log records.
type logWriter struct {
	log    *slog.Logger
	prefix string
}

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		if len(line) > 0 {
			w.log.Info(w.prefix + ": " + string(line))
		}
	}
	return len(p), nil
}

func progressLog(log *slog.Logger, prefix string) groth16.Progress {
	return groth16.ProgressLines(logWriter{log: log, prefix: prefix})
}
