package interlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

// Mode is a lock discipline.
type Mode string

// The interlock modes; see the package documentation.
const (
	ModeNone      Mode = "none"
	ModeExclusive Mode = "exclusive"
	ModeCompute   Mode = "compute"
	ModeSplit     Mode = "split"
)

// ModeDefault is the mode of a zero Config.Mode.
const ModeDefault = ModeCompute

// Modes lists the valid modes.
var Modes = []Mode{ModeNone, ModeExclusive, ModeCompute, ModeSplit}

// ParseMode returns the mode named s ("" is ModeDefault).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeDefault, nil
	}
	for _, m := range Modes {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	return "", fmt.Errorf("interlock: mode %q is not one of none, exclusive, compute, split", s)
}

// Lock names: the "lock" label of c2_lock_wait_seconds and attribute of
// "interlock.wait" spans.
const (
	LockExclusive = "exclusive"
	LockCompute   = "compute"
	LockUpload    = "upload"
	LockVRAM      = "vram"
)

// Stage names: span names and the Stage of stage events.
const (
	StagePrepare  = "prepare"
	StageUpload   = telemetry.SpanGPUUpload
	StageCompute  = telemetry.SpanGPUCompute
	StageEpilogue = telemetry.SpanEpilogue
)

// ErrExceedsBudget: a task needs more device memory than the device's whole
// budget, so waiting cannot help on this device.
var ErrExceedsBudget = errors.New("interlock: task exceeds the device's VRAM budget")

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	EventWait       EventKind = "wait"        // starts waiting for Lock
	EventAcquired   EventKind = "acquired"    // holds Lock
	EventReleased   EventKind = "released"    // gave Lock back
	EventStageStart EventKind = "stage-start" // Stage begins
	EventStageEnd   EventKind = "stage-end"   // Stage ended
)

// Event is one step of a proof on a device, for an Observer.
type Event struct {
	Device int
	// Who is the caller's label (the slot name).
	Who   string
	Kind  EventKind
	Lock  string // for wait, acquired, released
	Stage string // for stage-start, stage-end
	// Bytes is the VRAM reserved (Lock == LockVRAM).
	Bytes int64
}

// Config configures a Device.
type Config struct {
	// Index is the device index (the label of metrics and spans).
	Index int
	// Mode is the lock discipline. Default ModeCompute.
	Mode Mode
	// VRAMBudget is the device memory, in bytes, that the tasks of this
	// device may hold at once (parameters resident on the device are
	// outside it). 0 means unlimited (the CPU backend reports 0 bytes per
	// task anyway).
	VRAMBudget int64
	// Observer, if set, is called synchronously with every event, in the
	// order of the events of one proof. It must not block for long.
	Observer func(Event)
	// Metrics receives lock waits, stage latencies and VRAM gauges; nil
	// means none.
	Metrics *telemetry.Metrics
}

func (c *Config) validate() error {
	m, err := ParseMode(string(c.Mode))
	if err != nil {
		return fmt.Errorf("interlock: Config.Mode: %w", err)
	}
	c.Mode = m
	if c.Index < 0 {
		return fmt.Errorf("interlock: Config.Index %d is negative", c.Index)
	}
	if c.VRAMBudget < 0 {
		return fmt.Errorf("interlock: Config.VRAMBudget %d is negative", c.VRAMBudget)
	}
	return nil
}

// Device is one device's interlock: its locks and VRAM budget. It is safe
// for concurrent use by all slots of the device.
type Device struct {
	cfg      Config
	label    string
	exclude  *ctxLock // exclusive mode
	compute  *ctxLock // compute and split modes
	upload   *ctxLock // split mode
	vram     *semaphore.Weighted
	reserved atomic.Int64
}

// New returns the interlock of one device.
func New(cfg Config) (*Device, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := &Device{cfg: cfg, label: strconv.Itoa(cfg.Index)}
	switch cfg.Mode {
	case ModeExclusive:
		d.exclude = newCtxLock()
	case ModeCompute:
		d.compute = newCtxLock()
	case ModeSplit:
		d.compute = newCtxLock()
		d.upload = newCtxLock()
	}
	if cfg.VRAMBudget > 0 {
		d.vram = semaphore.NewWeighted(cfg.VRAMBudget)
		if cfg.Metrics != nil {
			cfg.Metrics.VRAMBytes.WithLabelValues(d.label, "budget").Set(float64(cfg.VRAMBudget))
		}
	}
	return d, nil
}

// Index is the device index.
func (d *Device) Index() int { return d.cfg.Index }

// Mode is the device's lock discipline.
func (d *Device) Mode() Mode { return d.cfg.Mode }

// Reserved is the VRAM currently reserved by tasks on this device.
func (d *Device) Reserved() int64 { return d.reserved.Load() }

// Report is what one proof spent where.
type Report struct {
	// LockWait is the sum of all waits: for locks and for VRAM.
	LockWait time.Duration
	// Backend are the backend's own stage timings (never including a
	// wait).
	Backend groth16.Timings
	// DeviceBytes is what the task reserved from the VRAM budget.
	DeviceBytes int64
}

// Prove proves w with key on this device under the device's interlock and
// returns the proof and where the time went. who labels the caller in
// events (the slot name). The task is always released, and its VRAM given
// back, on every path. Errors from the backend are returned wrapped with
// the stage; ctx's error is returned when ctx ends during a wait.
//
// Options: WitnessDone.
func (d *Device) Prove(ctx context.Context, key groth16.Key, w *groth16.Synthesized, rnd groth16.Randomness, who string, opts ...ProveOption) (*groth16.Proof, Report, error) {
	p := &proofRun{d: d, who: who}
	for _, o := range opts {
		o(p)
	}
	defer p.witnessDone() // on every path, after the task's Release at the latest
	proof, err := p.run(ctx, key, w, rnd)
	return proof, p.rep, err
}

// ProveOption configures one Prove.
type ProveOption func(*proofRun)

// WitnessDone has Prove call done, once, as soon as the task no longer
// reads the witness: after the stage that last reads it when the task says
// so (groth16.WitnessHolder: the CUDA backend after Upload, the CPU backend
// after Compute), else when the task is released; on every path, also when
// Prove fails. A worker gives the witness's buffers back to its pool there
// (groth16.Synthesized.Release), so the next synthesis reuses them while
// this proof computes.
func WitnessDone(done func()) ProveOption { return func(p *proofRun) { p.done = done } }

type proofRun struct {
	d    *Device
	who  string
	rep  Report
	task groth16.Task
	done func() // WitnessDone's, until called
}

// witnessDone calls the WitnessDone callback the first time.
func (p *proofRun) witnessDone() {
	if f := p.done; f != nil {
		p.done = nil
		f()
	}
}

// afterStage calls WitnessDone's callback when the task says it no longer
// reads the witness.
func (p *proofRun) afterStage() {
	if p.done != nil && !groth16.HoldsWitness(p.task) {
		p.witnessDone()
	}
}

func (p *proofRun) emit(e Event) {
	if p.d.cfg.Observer != nil {
		e.Device, e.Who = p.d.cfg.Index, p.who
		p.d.cfg.Observer(e)
	}
}

func (p *proofRun) run(ctx context.Context, key groth16.Key, w *groth16.Synthesized, rnd groth16.Randomness) (*groth16.Proof, error) {
	d := p.d
	if d.cfg.Mode == ModeExclusive {
		release, err := p.acquire(ctx, d.exclude, LockExclusive)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	err := p.stage(ctx, StagePrepare, "", func(ctx context.Context) error {
		t, err := key.Prepare(ctx, w, rnd)
		p.task = t
		return err
	})
	if err != nil {
		return nil, err
	}
	// Release the task first, then give its VRAM back, on every path.
	var releaseVRAM func()
	defer func() {
		p.task.Release()
		p.witnessDone()
		if releaseVRAM != nil {
			releaseVRAM()
		}
	}()

	p.rep.DeviceBytes = p.task.DeviceBytes()
	if p.rep.DeviceBytes > 0 && d.vram != nil {
		if releaseVRAM, err = p.reserve(ctx, p.rep.DeviceBytes); err != nil {
			return nil, err
		}
	}

	if err := p.locked(ctx, d.upload, LockUpload, StageUpload, telemetry.StageUpload, p.task.Upload); err != nil {
		return nil, err
	}
	p.afterStage()
	if err := p.locked(ctx, d.compute, LockCompute, StageCompute, telemetry.StageCompute, p.task.Compute); err != nil {
		return nil, err
	}
	p.afterStage()
	var proof *groth16.Proof
	err = p.stage(ctx, StageEpilogue, telemetry.StageEpilogue, func(ctx context.Context) error {
		var err error
		proof, err = p.task.Finish(ctx)
		return err
	})
	p.rep.Backend = p.task.Timings()
	if err != nil {
		return nil, err
	}
	return proof, nil
}

// locked runs one device stage under lock l (nil: no lock in this mode).
func (p *proofRun) locked(ctx context.Context, l *ctxLock, lockName, stage, metric string, fn func(context.Context) error) error {
	if l != nil {
		release, err := p.acquire(ctx, l, lockName)
		if err != nil {
			return err
		}
		defer release()
	}
	return p.stage(ctx, stage, metric, fn)
}

// stage runs fn under a span named stage and observes its latency.
func (p *proofRun) stage(ctx context.Context, stage, metric string, fn func(context.Context) error) error {
	ctx, span := telemetry.Tracer().Start(ctx, stage, trace.WithAttributes(telemetry.AttrDevice.Int(p.d.cfg.Index)))
	defer span.End()
	p.emit(Event{Kind: EventStageStart, Stage: stage})
	start := time.Now()
	err := fn(ctx)
	took := time.Since(start)
	p.emit(Event{Kind: EventStageEnd, Stage: stage})
	if err != nil {
		telemetry.RecordFailure(span, err)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return fmt.Errorf("interlock: device %d: %s: %w", p.d.cfg.Index, stage, err)
	}
	if metric != "" && p.d.cfg.Metrics != nil {
		p.d.cfg.Metrics.StageSeconds.WithLabelValues(metric).Observe(took.Seconds())
		p.d.cfg.Metrics.DeviceBusySeconds.WithLabelValues(p.d.label, metric).Add(took.Seconds())
	}
	return nil
}

// acquire waits for l under an "interlock.wait" span and returns its
// release.
func (p *proofRun) acquire(ctx context.Context, l *ctxLock, name string) (func(), error) {
	if err := p.wait(ctx, name, 0, l.lock); err != nil {
		return nil, err
	}
	// The release event comes before the unlock, so an observer always sees
	// it before the next holder's acquisition.
	return func() {
		p.emit(Event{Kind: EventReleased, Lock: name})
		l.unlock()
	}, nil
}

// reserve takes n bytes of the VRAM budget, waiting while others hold it.
func (p *proofRun) reserve(ctx context.Context, n int64) (func(), error) {
	d := p.d
	if n > d.cfg.VRAMBudget {
		return nil, fmt.Errorf("%w: device %d: task needs %d bytes, budget is %d", ErrExceedsBudget, d.cfg.Index, n, d.cfg.VRAMBudget)
	}
	err := p.wait(ctx, LockVRAM, n, func(ctx context.Context) error { return d.vram.Acquire(ctx, n) })
	if err != nil {
		return nil, err
	}
	d.setReserved(d.reserved.Add(n))
	return func() {
		p.emit(Event{Kind: EventReleased, Lock: LockVRAM, Bytes: n})
		d.setReserved(d.reserved.Add(-n))
		d.vram.Release(n)
	}, nil
}

func (d *Device) setReserved(v int64) {
	if d.cfg.Metrics != nil {
		d.cfg.Metrics.VRAMBytes.WithLabelValues(d.label, "reserved").Set(float64(v))
	}
}

// wait runs acquire under an "interlock.wait" span, times it into the
// report and the lock-wait histogram.
func (p *proofRun) wait(ctx context.Context, lock string, bytes int64, acquire func(context.Context) error) error {
	wctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanInterlockWait, trace.WithAttributes(
		telemetry.AttrDevice.Int(p.d.cfg.Index), attribute.String("c2.lock", lock)))
	p.emit(Event{Kind: EventWait, Lock: lock, Bytes: bytes})
	start := time.Now()
	err := acquire(wctx)
	took := time.Since(start)
	p.rep.LockWait += took
	if p.d.cfg.Metrics != nil {
		p.d.cfg.Metrics.LockWaitSeconds.WithLabelValues(p.d.label, lock).Observe(took.Seconds())
	}
	if err != nil {
		telemetry.RecordFailure(span, err)
		span.End()
		return fmt.Errorf("interlock: device %d: waiting for %s: %w", p.d.cfg.Index, lock, err)
	}
	span.End()
	p.emit(Event{Kind: EventAcquired, Lock: lock, Bytes: bytes})
	return nil
}
