package interlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cubeCircuit synthesizes x³ + x + 5 == y, y public, for x (y computed
// from it), into a System with values. A few constraints: the interlock
// tests care about the lock discipline, proved on the real CPU backend.
//
//	x · x = x2
//	x2 · x = x3
//	(x3 + x + 5) · ONE = y
func cubeCircuit(x uint64) *r1cs.System {
	sys := r1cs.NewSystem(r1cs.WithValues())
	var fx, fx2, fx3, fy, five fr.Element
	fx.SetUint64(x)
	fx2.Mul(&fx, &fx)
	fx3.Mul(&fx2, &fx)
	five.SetUint64(5)
	fy.Add(&fx3, &fx).Add(&fy, &five)
	y := sys.AllocInput(r1cs.N("y"), fy)
	vx := sys.Alloc(r1cs.N("x"), fx)
	vx2 := sys.Alloc(r1cs.N("x2"), fx2)
	vx3 := sys.Alloc(r1cs.N("x3"), fx3)
	var a, b, c r1cs.LC
	sys.Enforce(r1cs.N("x2"), a.Add(vx), b.Add(vx), c.Add(vx2))
	a.Reset()
	b.Reset()
	c.Reset()
	sys.Enforce(r1cs.N("x3"), a.Add(vx2), b.Add(vx), c.Add(vx3))
	a.Reset()
	b.Reset()
	c.Reset()
	sys.Enforce(r1cs.N("y"), a.Add(vx3).Add(vx).AddCoeff(&five, r1cs.One), b.Add(r1cs.One), c.Add(y))
	return sys
}

type fixture struct {
	key    groth16.Key
	vk     *groth16.VerifyingKey
	w      *groth16.Synthesized
	public []fr.Element
}

var (
	fixtureOnce sync.Once
	fixtureVal  *fixture
	fixtureErr  error
)

// loadFixture records the circuit, runs a seeded setup, synthesizes its
// instance and loads the key on the CPU backend (once per package).
func loadFixture(t *testing.T) *fixture {
	t.Helper()
	fixtureOnce.Do(func() { fixtureVal, fixtureErr = buildFixture() })
	require.NoError(t, fixtureErr)
	return fixtureVal
}

func buildFixture() (*fixture, error) {
	sys := cubeCircuit(3)
	if err := sys.Satisfied(); err != nil {
		return nil, err
	}
	pk, _, err := groth16.SetupR1CS(context.Background(), sys, groth16.SetupSeed([]byte("interlock test")))
	if err != nil {
		return nil, err
	}
	w, err := groth16.SynthesizeSystem(sys)
	if err != nil {
		return nil, err
	}
	key, err := groth16.NewCPUBackend(groth16.CPUWorkers(1)).Load(context.Background(), pk)
	if err != nil {
		return nil, err
	}
	var y fr.Element
	y.SetUint64(35)
	return &fixture{key: key, vk: &pk.VK, w: w, public: []fr.Element{y}}, nil
}

// recorder logs every interlock event and every gate crossing, in order,
// and lets a test wait for a condition on the log with a deadline.
type recorder struct {
	mu      sync.Mutex
	log     []Event
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) observe(e Event) {
	r.mu.Lock()
	r.log = append(r.log, e)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) has(who string, kind EventKind, what string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index(who, kind, what) >= 0
}

func (r *recorder) index(who string, kind EventKind, what string) int {
	for i, e := range r.log {
		if e.Who == who && e.Kind == kind && (e.Lock == what || e.Stage == what) {
			return i
		}
	}
	return -1
}

// waitFor blocks until cond holds on the log (checked after every event)
// or fails the test after a deadline.
func (r *recorder) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; events: %v", what, r.snapshot())
		}
	}
}

func (r *recorder) waitEvent(t *testing.T, who string, kind EventKind, what string) {
	t.Helper()
	r.waitFor(t, fmt.Sprintf("%s %s %s", who, kind, what), func() bool { return r.has(who, kind, what) })
}

func (r *recorder) snapshot() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.log...)
}

// interval is where a slot's stage started and ended in the log.
func (r *recorder) interval(who, stage string) (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index(who, EventStageStart, stage), r.index(who, EventStageEnd, stage)
}

// overlap reports whether two slots were inside a stage at the same time,
// from the event order (events are logged before locks are released).
func (r *recorder) overlap(t *testing.T, a, stageA, b, stageB string) bool {
	t.Helper()
	s1, e1 := r.interval(a, stageA)
	s2, e2 := r.interval(b, stageB)
	require.True(t, s1 >= 0 && e1 > s1 && s2 >= 0 && e2 > s2, "stages %s/%s and %s/%s must both have run", a, stageA, b, stageB)
	return s1 < e2 && s2 < e1
}

// gatedKey wraps the real CPU key: every stage of its tasks first blocks
// on the slot's gate for that stage (when the test set one) so a test can
// hold a slot inside a stage. Prepare is gated under the name "prepare".
type gatedKey struct {
	groth16.Key
	gates       map[string]chan struct{} // stage → closed when the slot may go on
	deviceBytes int64
}

func (k *gatedKey) gate(ctx context.Context, stage string) error {
	if g, ok := k.gates[stage]; ok {
		select {
		case <-g:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (k *gatedKey) Prepare(ctx context.Context, w *groth16.Synthesized, rnd groth16.Randomness) (groth16.Task, error) {
	if err := k.gate(ctx, StagePrepare); err != nil {
		return nil, err
	}
	t, err := k.Key.Prepare(ctx, w, rnd)
	if err != nil {
		return nil, err
	}
	return &gatedTask{Task: t, k: k}, nil
}

type gatedTask struct {
	groth16.Task
	k *gatedKey
}

func (t *gatedTask) DeviceBytes() int64 { return t.k.deviceBytes }
func (t *gatedTask) Upload(ctx context.Context) error {
	if err := t.k.gate(ctx, StageUpload); err != nil {
		return err
	}
	return t.Task.Upload(ctx)
}
func (t *gatedTask) Compute(ctx context.Context) error {
	if err := t.k.gate(ctx, StageCompute); err != nil {
		return err
	}
	return t.Task.Compute(ctx)
}

// slot is one prover goroutine of a test.
type slot struct {
	name  string
	key   *gatedKey
	done  chan error
	proof *groth16.Proof
	rep   Report
}

func newSlot(f *fixture, name string, gated ...string) *slot {
	k := &gatedKey{Key: f.key, gates: map[string]chan struct{}{}}
	for _, s := range gated {
		k.gates[s] = make(chan struct{})
	}
	return &slot{name: name, key: k, done: make(chan error, 1)}
}

func (s *slot) open(stage string) { close(s.key.gates[stage]) }

func (s *slot) start(ctx context.Context, d *Device, f *fixture) {
	go func() {
		rnd, err := groth16.NewRandomness()
		if err == nil {
			s.proof, s.rep, err = d.Prove(ctx, s.key, f.w, rnd, s.name)
		}
		s.done <- err
	}()
}

func (s *slot) wait(t *testing.T, f *fixture) {
	t.Helper()
	select {
	case err := <-s.done:
		require.NoError(t, err, s.name)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not finish", s.name)
	}
	require.NoError(t, groth16.Verify(f.vk, s.proof, f.public), "%s: proof made under the interlock must verify", s.name)
}

func newDevice(t *testing.T, mode Mode, budget int64, rec *recorder, m *telemetry.Metrics) *Device {
	t.Helper()
	d, err := New(Config{Index: 3, Mode: mode, VRAMBudget: budget, Observer: rec.observe, Metrics: m})
	require.NoError(t, err)
	return d
}

// firstOf waits until a or b reaches an event and returns the one that did
// (and the other).
func (r *recorder) firstOf(t *testing.T, a, b *slot, kind EventKind, what string) (*slot, *slot) {
	t.Helper()
	r.waitFor(t, fmt.Sprintf("%s or %s %s %s", a.name, b.name, kind, what), func() bool {
		return r.has(a.name, kind, what) || r.has(b.name, kind, what)
	})
	if r.has(a.name, kind, what) {
		return a, b
	}
	return b, a
}

func TestModeNoneOverlapsComputes(t *testing.T) {
	t.Parallel()
	f := loadFixture(t)
	rec := newRecorder()
	d := newDevice(t, ModeNone, 0, rec, nil)
	a, b := newSlot(f, "A", StageCompute), newSlot(f, "B", StageCompute)
	a.start(context.Background(), d, f)
	b.start(context.Background(), d, f)
	// Both are inside Compute at once: nothing serializes them.
	rec.waitEvent(t, "A", EventStageStart, StageCompute)
	rec.waitEvent(t, "B", EventStageStart, StageCompute)
	a.open(StageCompute)
	b.open(StageCompute)
	a.wait(t, f)
	b.wait(t, f)
	require.True(t, rec.overlap(t, "A", StageCompute, "B", StageCompute))
	for _, e := range rec.snapshot() {
		require.NotEqual(t, EventWait, e.Kind, "mode none takes no lock: %v", e)
	}
}

func TestModeComputeSerializesOnlyCompute(t *testing.T) {
	t.Parallel()
	f := loadFixture(t)
	rec := newRecorder()
	m := telemetry.NewMetrics()
	d := newDevice(t, ModeCompute, 0, rec, m)
	t0 := time.Now()
	a := newSlot(f, "A", StageUpload, StageCompute)
	b := newSlot(f, "B", StageUpload, StageCompute)
	a.start(context.Background(), d, f)
	b.start(context.Background(), d, f)
	// Uploads overlap: both slots are inside Upload before either goes on.
	rec.waitEvent(t, "A", EventStageStart, StageUpload)
	rec.waitEvent(t, "B", EventStageStart, StageUpload)
	a.open(StageUpload)
	b.open(StageUpload)
	// One slot gets the compute lock; the other waits for it.
	x, y := rec.firstOf(t, a, b, EventStageStart, StageCompute)
	rec.waitEvent(t, y.name, EventWait, LockCompute)
	require.False(t, rec.has(y.name, EventAcquired, LockCompute), "%s got the compute lock while %s holds it", y.name, x.name)
	x.open(StageCompute)
	rec.waitEvent(t, y.name, EventStageStart, StageCompute)
	y.open(StageCompute)
	a.wait(t, f)
	b.wait(t, f)

	require.True(t, rec.overlap(t, "A", StageUpload, "B", StageUpload), "compute mode must not serialize uploads")
	require.False(t, rec.overlap(t, "A", StageCompute, "B", StageCompute), "compute mode must serialize computes")
	// y's wait is its own number, never part of a device stage.
	require.Positive(t, y.rep.LockWait)
	require.Less(t, y.rep.Backend.Compute, y.rep.LockWait+y.rep.Backend.Compute)
	// The device's busy counter holds both computes (each stage wraps the
	// backend's own compute) and no lock wait: within the test's wall.
	busy := testutil.ToFloat64(m.DeviceBusySeconds.WithLabelValues("3", telemetry.StageCompute))
	require.GreaterOrEqual(t, busy, (x.rep.Backend.Compute + y.rep.Backend.Compute).Seconds())
	require.Less(t, busy, time.Since(t0).Seconds())
}

func TestModeSplitSerializesUploadsAndComputesSeparately(t *testing.T) {
	t.Parallel()
	f := loadFixture(t)
	rec := newRecorder()
	d := newDevice(t, ModeSplit, 0, rec, nil)
	a := newSlot(f, "A", StageUpload, StageCompute)
	b := newSlot(f, "B", StageUpload, StageCompute)
	a.start(context.Background(), d, f)
	b.start(context.Background(), d, f)
	x, y := rec.firstOf(t, a, b, EventStageStart, StageUpload)
	rec.waitEvent(t, y.name, EventWait, LockUpload)
	require.False(t, rec.has(y.name, EventStageStart, StageUpload), "%s uploads while %s holds the upload lock", y.name, x.name)
	x.open(StageUpload)
	// x moves to compute and y gets the upload lock: y's upload runs
	// while x computes.
	rec.waitEvent(t, x.name, EventStageStart, StageCompute)
	rec.waitEvent(t, y.name, EventStageStart, StageUpload)
	y.open(StageUpload)
	rec.waitEvent(t, y.name, EventWait, LockCompute)
	require.False(t, rec.has(y.name, EventStageStart, StageCompute))
	x.open(StageCompute)
	rec.waitEvent(t, y.name, EventStageStart, StageCompute)
	y.open(StageCompute)
	a.wait(t, f)
	b.wait(t, f)

	require.False(t, rec.overlap(t, "A", StageUpload, "B", StageUpload), "split mode must serialize uploads")
	require.False(t, rec.overlap(t, "A", StageCompute, "B", StageCompute), "split mode must serialize computes")
	require.True(t, rec.overlap(t, x.name, StageCompute, y.name, StageUpload), "split mode lets one slot upload while another computes")
}

func TestModeExclusiveSerializesWholeProofs(t *testing.T) {
	t.Parallel()
	f := loadFixture(t)
	rec := newRecorder()
	d := newDevice(t, ModeExclusive, 0, rec, nil)
	a := newSlot(f, "A", StagePrepare, StageCompute)
	b := newSlot(f, "B", StagePrepare, StageCompute)
	a.start(context.Background(), d, f)
	b.start(context.Background(), d, f)
	x, y := rec.firstOf(t, a, b, EventAcquired, LockExclusive)
	rec.waitEvent(t, y.name, EventWait, LockExclusive)
	x.open(StagePrepare)
	rec.waitEvent(t, x.name, EventStageStart, StageCompute)
	require.False(t, rec.has(y.name, EventStageStart, StagePrepare), "%s prepares while %s holds the device", y.name, x.name)
	x.open(StageCompute)
	rec.waitEvent(t, y.name, EventAcquired, LockExclusive)
	y.open(StagePrepare)
	y.open(StageCompute)
	a.wait(t, f)
	b.wait(t, f)

	// Every stage of y starts after x released the device.
	rel := -1
	for i, e := range rec.snapshot() {
		if e.Who == x.name && e.Kind == EventReleased && e.Lock == LockExclusive {
			rel = i
		}
	}
	require.Positive(t, rel)
	for _, st := range []string{StagePrepare, StageUpload, StageCompute, StageEpilogue} {
		s, _ := rec.interval(y.name, st)
		require.Greater(t, s, rel, "%s's %s must start after %s released the device", y.name, st, x.name)
	}
}

func TestVRAMBudgetWaitsNeverOverCommits(t *testing.T) {
	t.Parallel()
	f := loadFixture(t)
	rec := newRecorder()
	m := telemetry.NewMetrics()
	d := newDevice(t, ModeNone, 1000, rec, m)
	a := newSlot(f, "A", StageCompute)
	b := newSlot(f, "B")
	a.key.deviceBytes, b.key.deviceBytes = 600, 600
	a.start(context.Background(), d, f)
	rec.waitEvent(t, "A", EventStageStart, StageCompute)
	require.EqualValues(t, 600, d.Reserved())
	b.start(context.Background(), d, f)
	// B needs 600 of the 400 left: it waits instead of over-committing.
	rec.waitEvent(t, "B", EventWait, LockVRAM)
	require.False(t, rec.has("B", EventStageStart, StageUpload))
	a.open(StageCompute)
	a.wait(t, f)
	b.wait(t, f)
	require.Zero(t, d.Reserved(), "every reservation is given back")
	ia := rec.index("A", EventReleased, LockVRAM)
	ib := rec.index("B", EventAcquired, LockVRAM)
	require.Less(t, ia, ib, "B reserves only after A gave its VRAM back")

	// A task larger than the whole budget fails at once.
	c := newSlot(f, "C")
	c.key.deviceBytes = 1001
	c.start(context.Background(), d, f)
	err := <-c.done
	require.ErrorIs(t, err, ErrExceedsBudget)
	require.ErrorContains(t, err, "1001")
}

func TestWaitHonoursContext(t *testing.T) {
	t.Parallel()
	f := loadFixture(t)
	rec := newRecorder()
	d := newDevice(t, ModeCompute, 0, rec, nil)
	a := newSlot(f, "A", StageCompute)
	a.start(context.Background(), d, f)
	rec.waitEvent(t, "A", EventStageStart, StageCompute)

	ctx, cancel := context.WithCancel(context.Background())
	b := newSlot(f, "B")
	b.start(ctx, d, f)
	rec.waitEvent(t, "B", EventWait, LockCompute)
	cancel()
	err := <-b.done
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, errors.Is(err, context.Canceled))

	a.open(StageCompute)
	a.wait(t, f)
	// The lock is free again: a third proof goes through.
	c := newSlot(f, "C")
	c.start(context.Background(), d, f)
	c.wait(t, f)
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Mode: "turbo"})
	require.ErrorContains(t, err, "Config.Mode")
	_, err = New(Config{Index: -1})
	require.ErrorContains(t, err, "Config.Index")
	_, err = New(Config{VRAMBudget: -5})
	require.ErrorContains(t, err, "Config.VRAMBudget")
	d, err := New(Config{})
	require.NoError(t, err)
	require.Equal(t, ModeCompute, d.Mode())
	m, err := ParseMode("SPLIT")
	require.NoError(t, err)
	require.Equal(t, ModeSplit, m)
}

// copyingKey's tasks say they stop reading the witness once Upload has
// returned, as the CUDA backend's do (groth16.WitnessHolder).
type copyingKey struct{ *gatedKey }

func (k copyingKey) Prepare(ctx context.Context, w *groth16.Synthesized, rnd groth16.Randomness) (groth16.Task, error) {
	t, err := k.gatedKey.Prepare(ctx, w, rnd)
	if err != nil {
		return nil, err
	}
	return &copyingTask{gatedTask: t.(*gatedTask)}, nil
}

type copyingTask struct {
	*gatedTask
	uploaded bool
}

func (t *copyingTask) Upload(ctx context.Context) error {
	err := t.gatedTask.Upload(ctx)
	t.uploaded = true
	return err
}
func (t *copyingTask) HoldsWitness() bool { return !t.uploaded }

// TestWitnessDoneAfterLastRead: Prove's WitnessDone callback runs once, right
// after the stage that last reads the witness — Compute for the CPU
// backend, Upload for a task that copies it there (the CUDA backend's
// behaviour), Release for a task that does not say — and once on a failed
// proof too.
func TestWitnessDoneAfterLastRead(t *testing.T) {
	t.Parallel()
	f := loadFixture(t)
	for _, tc := range []struct {
		name        string
		key         func(s *slot) groth16.Key
		after       string // the stage whose end precedes the callback
		beforeStage string // the stage that starts after it ("" : none)
	}{
		{"cpu", func(*slot) groth16.Key { return f.key }, StageCompute, StageEpilogue},
		{"copies-at-upload", func(s *slot) groth16.Key { return copyingKey{s.key} }, StageUpload, StageCompute},
		{"does-not-say", func(s *slot) groth16.Key { return s.key }, StageEpilogue, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			d := newDevice(t, ModeCompute, 0, rec, nil)
			s := newSlot(f, tc.name)
			calls, at := 0, -1
			rnd, err := groth16.NewRandomness()
			require.NoError(t, err)
			proof, _, err := d.Prove(context.Background(), tc.key(s), f.w, rnd, s.name, WitnessDone(func() {
				calls++
				at = len(rec.snapshot())
			}))
			require.NoError(t, err)
			require.NoError(t, groth16.Verify(f.vk, proof, f.public))
			require.Equal(t, 1, calls)
			_, end := rec.interval(s.name, tc.after)
			require.Greater(t, at, end, "called after %s ended", tc.after)
			if tc.beforeStage != "" {
				start, _ := rec.interval(s.name, tc.beforeStage)
				require.LessOrEqual(t, at, start, "called before %s started", tc.beforeStage)
			}
		})
	}
	t.Run("failed", func(t *testing.T) {
		rec := newRecorder()
		d := newDevice(t, ModeCompute, 0, rec, nil)
		s := newSlot(f, "F", StageUpload)
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		go func() {
			rec.waitEvent(t, "F", EventStageStart, StageUpload)
			cancel()
		}()
		_, _, err := d.Prove(ctx, copyingKey{s.key}, f.w, groth16.Randomness{}, s.name, WitnessDone(func() { calls++ }))
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 1, calls)
	})
}
