package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/memlimit"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	"github.com/c2cluster/c2cluster/worker/backend"
	"github.com/c2cluster/c2cluster/worker/interlock"
)

// Prover is the part of a worker that proves, without the queue and the
// job store: the selected backend, every shape's parameters loaded onto
// every device (one backend instance bound to each device index), each
// device's interlock, and the slots (devices × GPUWorkersPerDevice, each
// pinned to its device). A Node runs its queue slots on one; a benchmark
// (worker/cmd/c2-bench) feeds partitions to the same slots directly, so what
// it measures is the configuration a worker runs.
type Prover struct {
	cfg     Config
	sel     backend.Selection
	shapes  map[string]*ShapeParams
	order   []string // shape names, in configuration order
	devices []*device
	// buffers holds each shape's partition buffers (wires, A, B, C) for
	// reuse across partitions, at most one set per slot (bufferLimit).
	buffers map[string]*groth16.BufferPool

	mu     sync.Mutex
	closed bool
}

// device is one device of a prover: its interlock and the keys of every
// shape loaded on its backend instance.
type device struct {
	index   int
	name    string // "cpu0", "cuda1"
	backend groth16.Backend
	lock    *interlock.Device
	keys    map[string]groth16.Key
}

// NewProver selects the backend (Config.Backend, Devices, CPUThreads,
// CUDALibrary, Residency, ParamsMemoryBudget), loads every shape onto every
// device and makes each device's interlock (Config.Interlock, VRAMBudget,
// Observer, Metrics). The queue settings of Config (Shapes, ParamsDir,
// lanes, timeouts) are not used: the shapes are the ones given. Close
// releases the keys.
func NewProver(ctx context.Context, cfg Config, shapes ...*ShapeParams) (*Prover, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Shapes = cfg.Shapes[:0:0]
	for _, sp := range shapes {
		if sp == nil {
			return nil, errors.New("node: NewProver: nil shape parameters")
		}
		cfg.Shapes = append(cfg.Shapes, sp.name)
	}
	if len(shapes) == 0 {
		return nil, errors.New("node: NewProver: no shape parameters")
	}
	if err := cfg.validateProver(); err != nil {
		return nil, err
	}
	sel, opts, err := selectBackend(&cfg)
	if err != nil {
		return nil, err
	}
	return openProver(ctx, cfg, sel, opts, shapes)
}

// selectBackend resolves the configured backend and devices, logs the
// choice, and fills in the default slots per device.
func selectBackend(cfg *Config) (backend.Selection, backend.Options, error) {
	opts := backend.Options{CPUThreads: cfg.CPUThreads, CUDALibrary: cfg.CUDALibrary, Residency: cfg.Residency,
		MemoryBudget: cfg.ParamsMemoryBudget}
	sel, err := backend.Select(cfg.Backend, opts, cfg.Devices)
	if err != nil {
		return sel, opts, fmt.Errorf("node: Config.Backend: %w", err)
	}
	cfg.Logger.Info("worker: " + sel.Why)
	if cfg.GPUWorkersPerDevice == 0 {
		cfg.GPUWorkersPerDevice = defaultWorkers(sel.Factory.Name)
	}
	return sel, opts, checkSlots("Config.GPUWorkersPerDevice", len(sel.Devices), cfg.GPUWorkersPerDevice)
}

// checkSlots refuses more than MaxSlots slots; the error names what set
// the count.
func checkSlots(what string, devices, perDevice int) error {
	if n := devices * perDevice; n > MaxSlots {
		return fmt.Errorf("node: %s: %d devices × %d = %d slots exceeds %d", what, devices, perDevice, n, MaxSlots)
	}
	return nil
}

func defaultWorkers(backendName string) int {
	if backendName == backend.NameCPU {
		return CPUWorkersPerDeviceDefault
	}
	return GPUWorkersPerDeviceDefault
}

// openProver loads the shapes onto every selected device.
func openProver(ctx context.Context, cfg Config, sel backend.Selection, opts backend.Options, shapes []*ShapeParams) (*Prover, error) {
	p := &Prover{cfg: cfg, sel: sel, shapes: map[string]*ShapeParams{}, buffers: map[string]*groth16.BufferPool{}}
	for _, sp := range shapes {
		if _, dup := p.shapes[sp.name]; dup {
			return nil, fmt.Errorf("node: shape %s given twice", sp.name)
		}
		p.shapes[sp.name] = sp
		p.order = append(p.order, sp.name)
		p.buffers[sp.name] = sp.compiled.NewBufferPool(p.bufferLimit(len(sel.Devices)))
	}
	for _, idx := range sel.Devices {
		d, err := p.openDevice(ctx, opts, idx)
		if err != nil {
			p.closeDevices()
			return nil, err
		}
		p.devices = append(p.devices, d)
	}
	p.releaseHostKeys()
	p.pinBuffers()
	p.checkMemory()
	return p, nil
}

// checkMemory warns at start when the slots' partition buffer sets, which
// the pools allocate as the slots first synthesize, will not fit under the
// process's Go memory limit beside what the heap holds after loading
// (compiled circuits, host keys still needed): e.g. three slots of 32 GiB
// (3 × 15.9 GiB) and the 15.5 GiB circuit on a 64 GiB host. Past the
// limit the collector runs all the time and the kernel may kill the
// worker; fewer slots per device is the fix.
func (p *Prover) checkMemory() {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 { // none set
		return
	}
	slots := p.bufferLimit(len(p.devices))
	var buffers int64
	for _, name := range p.order {
		buffers += p.buffers[name].SetBytes() * int64(slots)
	}
	runtime.GC() // what loading left live (a released host key is garbage now)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	held := int64(live[0].Value.Uint64())
	if held+buffers <= limit {
		return
	}
	p.cfg.Logger.Warn(fmt.Sprintf("worker: %d slots' partition buffers (%s) and the %s live after loading exceed the Go memory limit of %s; lower gpu_workers_per_device or raise memory_limit",
		slots, memlimit.Format(buffers), memlimit.Format(held), memlimit.Format(limit)),
		"slots", slots, "buffer_bytes", buffers, "live_heap_bytes", held, "memory_limit_bytes", limit)
}

// bufferRegistrar is a backend that page-locks host memory for its uploads
// (the CUDA backend: registrations hold for every device of the process).
type bufferRegistrar interface {
	RegisterBuffers(set *groth16.Buffers) (release func(), err error)
}

// pinBuffers installs, with Config.PinBuffers and a backend that can, the
// pools' hook that page-locks every set of partition buffers when it is
// allocated (and unlocks it when the pool drops it), so uploads DMA straight
// from the sets. A failure is logged once per shape; that set uploads
// through the staging buffers.
func (p *Prover) pinBuffers() {
	if !p.cfg.pinBuffers() || len(p.devices) == 0 {
		return
	}
	r, ok := p.devices[0].backend.(bufferRegistrar)
	if !ok {
		return
	}
	for _, name := range p.order {
		pool := p.buffers[name]
		var once sync.Once
		pool.OnAlloc(func(set *groth16.Buffers) (func(), error) {
			start := time.Now()
			release, err := r.RegisterBuffers(set)
			if err != nil {
				once.Do(func() {
					p.cfg.Logger.Warn("worker: page-locking partition buffers failed; uploads go through staging",
						"shape", name, "bytes", pool.SetBytes(), "err", err)
				})
				return nil, err
			}
			p.cfg.Logger.Debug("worker: partition buffers page-locked", "shape", name, "bytes", pool.SetBytes(),
				"took", time.Since(start).Round(time.Millisecond))
			return release, nil
		})
		p.cfg.Logger.Info("worker: partition buffers are page-locked when allocated", "shape", name,
			"bytes_per_set", pool.SetBytes(), "sets", p.bufferLimit(len(p.devices)))
	}
}

// releaseHostKeys drops the host copy of every shape's proving key that
// every device holds in device memory: those keys no longer reference the
// host points (the CUDA backend copied them), so the 44.1 GiB of a 32 GiB
// shape can be collected. Keys on the CPU backend or pinned read the host
// points for every proof; a shape with one of those keeps its copy.
func (p *Prover) releaseHostKeys() {
	for _, name := range p.order {
		resident := len(p.devices) > 0
		for _, d := range p.devices {
			resident = resident && d.keys[name].Residency() == "device"
		}
		if resident {
			sp := p.shapes[name]
			sp.releaseHostKey()
			p.cfg.Logger.Info("worker: host copy of the parameters released (resident on every device)", "shape", name, "bytes", sp.bytes)
		}
	}
}

func (p *Prover) openDevice(ctx context.Context, opts backend.Options, idx int) (*device, error) {
	opts.Device = idx
	b, err := p.sel.Factory.New(opts)
	if err != nil {
		return nil, fmt.Errorf("node: device %d: %w", idx, err)
	}
	lock, err := p.newLock(idx, interlock.Mode(p.cfg.Interlock), p.cfg.VRAMBudget)
	if err != nil {
		return nil, fmt.Errorf("node: device %d: %w", idx, err)
	}
	d := &device{index: idx, name: b.Name() + strconv.Itoa(idx), backend: b, lock: lock, keys: map[string]groth16.Key{}}
	for _, name := range p.order {
		sp := p.shapes[name]
		start := time.Now()
		pk, err := sp.provingKey()
		if err != nil {
			for _, k := range d.keys {
				_ = k.Close()
			}
			return nil, err
		}
		k, err := b.Load(ctx, pk)
		if err != nil {
			for _, k := range d.keys {
				_ = k.Close()
			}
			return nil, fmt.Errorf("%w: shape %s: load onto %s: %v", ErrParams, name, d.name, err)
		}
		d.keys[name] = k
		p.cfg.Metrics.SRSResidentBytes.WithLabelValues(name, k.Residency()).Add(float64(sp.bytes))
		p.cfg.Logger.Info("worker: parameters resident", "shape", name, "device", d.name, "residency", k.Residency(),
			"took", time.Since(start).Round(time.Millisecond))
	}
	return d, nil
}

// bufferLimit is how many sets of partition buffers a shape's pool keeps:
// one per slot. A slot holds its set from synthesis until the backend has
// read the witness (the CUDA backend: Upload; the CPU backend: Compute), so
// no slot waits for one, and memory for witnesses stays at one set per slot
// however many partitions go through.
func (p *Prover) bufferLimit(devices int) int { return devices * p.cfg.GPUWorkersPerDevice }

// BufferStats reports the pool of a shape's partition buffers (zero for an
// unknown shape).
func (p *Prover) BufferStats(shape string) groth16.BufferStats {
	if b := p.buffers[shape]; b != nil {
		return b.Stats()
	}
	return groth16.BufferStats{}
}

func (p *Prover) newLock(idx int, mode interlock.Mode, budget int64) (*interlock.Device, error) {
	return interlock.New(interlock.Config{Index: idx, Mode: mode, VRAMBudget: budget,
		Observer: p.cfg.Observer, Metrics: p.cfg.Metrics})
}

func (p *Prover) closeDevices() {
	for _, d := range p.devices {
		for name, k := range d.keys {
			if err := k.Close(); err != nil {
				p.cfg.Logger.Warn("worker: closing key", "shape", name, "device", d.name, "err", err)
			}
			p.cfg.Metrics.SRSResidentBytes.WithLabelValues(name, k.Residency()).Sub(float64(p.shapes[name].bytes))
		}
	}
	p.devices = nil
}

// Close releases every key on every device. Every partition must have
// returned first. It is safe to call more than once.
func (p *Prover) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.closeDevices()
		for _, b := range p.buffers {
			b.Close() // unlocks page-locked sets
		}
	}
}

// Backend is the selected backend's name ("cpu", "cuda").
func (p *Prover) Backend() string { return p.sel.Factory.Name }

// Why is the backend selection's log line: which backend and why.
func (p *Prover) Why() string { return p.sel.Why }

// Devices are the device indexes the prover runs on.
func (p *Prover) Devices() []int { return append([]int(nil), p.sel.Devices...) }

// DeviceNames are the devices' names ("cpu0", "cuda1").
func (p *Prover) DeviceNames() []string {
	out := make([]string, len(p.devices))
	for i, d := range p.devices {
		out[i] = d.name
	}
	return out
}

// WorkersPerDevice is the number of slots per device.
func (p *Prover) WorkersPerDevice() int { return p.cfg.GPUWorkersPerDevice }

// Interlock is the devices' lock discipline.
func (p *Prover) Interlock() interlock.Mode { return interlock.Mode(p.cfg.Interlock) }

// VRAMBudget is each device's budget for proofs in flight (0: none).
func (p *Prover) VRAMBudget() int64 { return p.cfg.VRAMBudget }

// Residency says where a shape's parameters live on the first device
// ("host", "device", "pinned"; "" for an unknown shape).
func (p *Prover) Residency(shape string) string {
	if len(p.devices) == 0 || p.devices[0].keys[shape] == nil {
		return ""
	}
	return p.devices[0].keys[shape].Residency()
}

// SetInterlock gives every device a fresh interlock of mode with budget
// bytes of VRAM for proofs in flight, and sets the slots per device, keeping
// the loaded parameters: a benchmark sweeps the configurations this way.
// No partition may be in flight; slots taken from Slots before keep their
// devices but the new count applies to the next Slots.
func (p *Prover) SetInterlock(mode interlock.Mode, workersPerDevice int, budget int64) error {
	mode, err := interlock.ParseMode(string(mode))
	if err != nil {
		return fmt.Errorf("node: SetInterlock: %w", err)
	}
	switch {
	case workersPerDevice < 0:
		return fmt.Errorf("node: SetInterlock: %d workers per device is negative", workersPerDevice)
	case workersPerDevice == 0:
		workersPerDevice = defaultWorkers(p.Backend())
	}
	if err := checkSlots("SetInterlock", len(p.devices), workersPerDevice); err != nil {
		return err
	}
	if budget < 0 {
		return fmt.Errorf("node: SetInterlock: VRAM budget %d is negative", budget)
	}
	locks := make([]*interlock.Device, len(p.devices))
	for i, d := range p.devices {
		if locks[i], err = p.newLock(d.index, mode, budget); err != nil {
			return fmt.Errorf("node: device %d: %w", d.index, err)
		}
	}
	for i, d := range p.devices {
		d.lock = locks[i]
	}
	p.cfg.Interlock, p.cfg.GPUWorkersPerDevice, p.cfg.VRAMBudget = string(mode), workersPerDevice, budget
	for _, b := range p.buffers {
		b.SetLimit(p.bufferLimit(len(p.devices)))
	}
	return nil
}

// Slot is one worker slot: a name ("<id>/<device>/<n>") and the device it
// is pinned to. A slot proves one partition at a time.
type Slot struct {
	p    *Prover
	name string
	dev  *device
}

// Name is the slot's name, as in spans, logs and interlock events.
func (s *Slot) Name() string { return s.name }

// Device is the index of the slot's device.
func (s *Slot) Device() int { return s.dev.index }

// Slots returns the prover's slots: for every device, WorkersPerDevice
// slots pinned to it, in device order.
func (p *Prover) Slots() []*Slot {
	var out []*Slot
	for _, d := range p.devices {
		for i := 0; i < p.cfg.GPUWorkersPerDevice; i++ {
			out = append(out, &Slot{p: p, name: fmt.Sprintf("%s/%s/%d", p.cfg.ID, d.name, i), dev: d})
		}
	}
	return out
}

// PartitionResult is what one partition produced and where its time went.
type PartitionResult struct {
	Proof *groth16.Proof
	// Synthesis is the CPU synthesis (witness + solver), wall time;
	// SynthesisCPU the CPU time its own threads spent (circuit.WithCPUTime:
	// exact while other partitions are synthesized too; 0 where it cannot
	// be read).
	Synthesis, SynthesisCPU time.Duration
	// Prove is the interlocked proof's wall time without its waits;
	// LockWait is the sum of those waits (locks and VRAM).
	Prove, LockWait time.Duration
	// Verify is the check of the proof against the natively computed
	// public inputs.
	Verify time.Duration
	// Interlock is the interlock's report: the backend's own stage
	// timings (prepare, upload, compute, finish) and the device bytes the
	// task reserved.
	Interlock interlock.Report
}

// StageError is the failure of one stage of ProvePartition (Stage is
// StageSynthesize, StageProve or StageVerify); Err is the error as the
// worker reports it. Errors of the before callback are returned as they
// are, never as a StageError.
type StageError struct {
	Stage string
	Err   error
}

func (e *StageError) Error() string { return e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }

// ProvePartition runs partition k of a parsed C1 output through the slot's
// stages, as a worker does for a task: synthesis on the CPU (span
// "synthesize"), the proof through the device's interlock (spans
// "interlock.wait", "prepare", "gpu.upload", "gpu.compute", "epilogue"),
// and verification against the natively computed public inputs (span
// "verify"); stage latencies go to the metrics. before, when not nil, is
// called before each stage with its name (StageSynthesize, StageProve,
// StageVerify); its error ends the partition and is returned as it is.
//
// A failed stage is a *StageError: synthesis errors wrap
// circuit.ErrInvalidInput or circuit.ErrUnsatisfied when the input can
// never be proved; a proof that does not verify wraps ErrProofInvalid. The
// result is not nil even on error and holds the timings so far.
func (s *Slot) ProvePartition(ctx context.Context, shape string, out *c1.Output, k int,
	before func(ctx context.Context, stage string) error) (*PartitionResult, error) {
	p := s.p
	m := p.cfg.Metrics
	res := &PartitionResult{}
	sp, ok := p.shapes[shape]
	key := s.dev.keys[shape]
	if !ok || key == nil {
		return res, fmt.Errorf("worker %s has no parameters for shape %s", p.cfg.ID, shape)
	}
	call := func(stage string) error {
		if before == nil {
			return nil
		}
		return before(ctx, stage)
	}

	// Synthesis.
	if err := call(StageSynthesize); err != nil {
		return res, err
	}
	sctx, sspan := telemetry.Tracer().Start(ctx, telemetry.SpanSynthesize, trace.WithAttributes(telemetry.AttrShape.String(shape)))
	start := time.Now()
	// The witness is built in one of the shape's pooled buffer sets and
	// given back as soon as the backend no longer reads it (WitnessDone
	// below), on every path (the deferred Release).
	w, err := sp.compiled.Synthesize(sctx, out, k, circuit.WithBuffers(p.buffers[shape]), circuit.WithCPUTime(&res.SynthesisCPU))
	defer w.Release()
	res.Synthesis = time.Since(start)
	if res.SynthesisCPU > 0 {
		sspan.SetAttributes(telemetry.AttrCPUSeconds.Float64(res.SynthesisCPU.Seconds()))
	}
	telemetry.RecordFailure(sspan, err)
	sspan.End()
	if err != nil {
		return res, &StageError{Stage: StageSynthesize, Err: fmt.Errorf("synthesize partition %d: %w", k, err)}
	}
	m.StageSeconds.WithLabelValues(telemetry.StageSynthesize).Observe(res.Synthesis.Seconds())

	// Prove, through the device's interlock.
	if err := call(StageProve); err != nil {
		return res, err
	}
	rnd, err := groth16.NewRandomness()
	if err != nil {
		return res, &StageError{Stage: StageProve, Err: err}
	}
	start = time.Now()
	proof, rep, err := s.dev.lock.Prove(ctx, key, w, rnd, s.name, interlock.WitnessDone(w.Release))
	wall := time.Since(start)
	res.Interlock = rep
	res.LockWait = rep.LockWait
	res.Prove = wall - rep.LockWait
	if err != nil {
		return res, &StageError{Stage: StageProve, Err: fmt.Errorf("prove partition %d on %s: %w", k, s.dev.name, err)}
	}
	m.StageSeconds.WithLabelValues(telemetry.StageProve).Observe(res.Prove.Seconds())

	// Verify against the natively computed public inputs.
	if err := call(StageVerify); err != nil {
		return res, err
	}
	_, vspan := telemetry.Tracer().Start(ctx, telemetry.SpanVerify)
	start = time.Now()
	verr := sp.verify(out, k, proof)
	res.Verify = time.Since(start)
	telemetry.RecordFailure(vspan, verr)
	vspan.End()
	if verr != nil {
		return res, &StageError{Stage: StageVerify, Err: fmt.Errorf("%w: partition %d on %s: %w", ErrProofInvalid, k, s.dev.name, verr)}
	}
	m.StageSeconds.WithLabelValues(telemetry.StageVerify).Observe(res.Verify.Seconds())
	res.Proof = proof
	return res, nil
}

// verify checks proof against partition k's public inputs, computed
// natively from the C1 output.
func (sp *ShapeParams) verify(out *c1.Output, k int, proof *groth16.Proof) error {
	inputs, err := circuit.PublicInputs(out, k)
	if err != nil {
		return fmt.Errorf("public inputs: %w", err)
	}
	return sp.pvk.Verify(proof, inputs)
}
