//go:build cgo

package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// Backend proves on one CUDA device. It is safe for concurrent use; keys
// and tasks it creates follow the groth16 interfaces' rules.
type Backend struct {
	cfg  Config
	lib  *Library
	info DeviceInfo
}

// New loads the library and checks the configured device. Errors wrap
// ErrLibrary (no library, wrong ABI) or ErrNoDevice.
func New(cfg Config) (*Backend, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	lib, err := Open(cfg.LibraryPath)
	if err != nil {
		return nil, err
	}
	n, err := lib.DeviceCount()
	if err != nil {
		return nil, err
	}
	if cfg.Device >= n {
		return nil, fmt.Errorf("%w: device %d configured, %d present", ErrNoDevice, cfg.Device, n)
	}
	info, err := lib.DeviceInfo(cfg.Device)
	if err != nil {
		return nil, err
	}
	return &Backend{cfg: cfg, lib: lib, info: info}, nil
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Device describes the backend's device (as seen at New).
func (b *Backend) Device() DeviceInfo { return b.info }

// Library is the loaded library.
func (b *Backend) Library() *Library { return b.lib }

// shape is what a key needs to know about its parameters.
type shape struct {
	domain, inputs, aux, numA, numB int64
	hForm                           groth16.HForm
}

// hPoints is the H query's length: domain − 1, or domain in
// coset-Lagrange form (groth16.ProvingKey.DomainSize's inverse).
func (s shape) hPoints() int64 {
	if s.hForm == groth16.HCosetLagrange {
		return s.domain
	}
	return s.domain - 1
}

// pkShape checks pk as every backend does (groth16.CheckProvingKey), with
// this library's smaller domain limit, 2^27.
func pkShape(pk *groth16.ProvingKey) (shape, error) {
	if err := groth16.CheckProvingKey(pk); err != nil {
		return shape{}, err
	}
	if n := int64(pk.DomainSize()); n > 1<<27 {
		return shape{}, fmt.Errorf("%w: domain %d exceeds 2^27", groth16.ErrShape, n)
	}
	return shape{domain: int64(pk.DomainSize()), inputs: int64(len(pk.VK.IC)), aux: int64(len(pk.L)),
		numA: int64(len(pk.A)), numB: int64(len(pk.BG1)), hForm: pk.HForm}, nil
}

// ptr is the address of v's first element, nil for an empty slice.
func ptr[T any](v []T) unsafe.Pointer {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Pointer(&v[0])
}

// Load makes pk's parameters available on the device: copied into device
// memory (resident) or page-locked where they are (pinned), per
// Config.Residency; auto picks resident when the parameters, the NTT tables
// and TaskReserve fit MemoryBudget (or the device's free memory).
func (b *Backend) Load(ctx context.Context, pk *groth16.ProvingKey) (groth16.Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sh, err := pkShape(pk)
	if err != nil {
		return nil, err
	}
	k := &key{b: b, pk: pk, vk: &pk.VK, lInput: pk.LInput, shape: sh}
	desc := b.pkDesc(pk, sh, &k.pinner)
	res, err := b.chooseResidency(desc)
	if err != nil {
		k.pinner.Unpin()
		return nil, err
	}
	desc.residency = res
	total := int64(len(pk.H)+len(pk.L)+len(pk.A)+len(pk.BG1))*g1Size + int64(len(pk.BG2))*g2Size
	b.progress("cuda load", 0, total)
	ck, err := b.lib.a.keyCreate(b.cfg.Device, desc)
	if err != nil {
		k.pinner.Unpin()
		return nil, err
	}
	if res == residencyDevice {
		// Copied into device memory: the host arrays are free again, and
		// the key keeps only their shape (and the verifying key), so the
		// caller's copy of the points (41 GiB at 32 GiB) can be collected
		// once it drops it.
		k.pinner.Unpin()
		k.residency = string(ResidencyDevice)
		vk := pk.VK
		k.pk, k.vk = nil, &vk
	} else {
		k.residency = string(ResidencyPinned)
	}
	k.ck = ck
	b.progress("cuda load", total, total)
	return k, nil
}

// cHForm is f's C2G_H_* value.
func cHForm(f groth16.HForm) int32 {
	if f == groth16.HCosetLagrange {
		return 1 // C2G_H_COSET_LAGRANGE
	}
	return 0 // C2G_H_MONOMIAL
}

// pkDesc describes pk's parameters to the library. The C side reads the
// arrays during the calls (device residency) or keeps them page-locked for
// the key's life (pinned): they are pinned in Go's heap with pin either
// way so the descriptor may point at them.
func (b *Backend) pkDesc(pk *groth16.ProvingKey, sh shape, pin *runtime.Pinner) *keyDesc {
	desc := &keyDesc{domain: sh.domain, inputs: sh.inputs, aux: sh.aux, numA: sh.numA, numB: sh.numB,
		hForm: cHForm(sh.hForm), h: ptr(pk.H), l: ptr(pk.L), a: ptr(pk.A), bg1: ptr(pk.BG1), bg2: ptr(pk.BG2),
		streamChunk: int64(b.cfg.StreamChunk)}
	for _, p := range []unsafe.Pointer{desc.h, desc.l, desc.a, desc.bg1, desc.bg2} {
		if p != nil {
			pin.Pin(p)
		}
	}
	return desc
}

func (b *Backend) progress(stage string, done, total int64) {
	if b.cfg.Progress != nil {
		b.cfg.Progress(stage, done, total)
	}
}

const (
	residencyDevice = 1 // C2G_RESIDENCY_DEVICE
	residencyPinned = 2 // C2G_RESIDENCY_PINNED
)

func (b *Backend) chooseResidency(desc *keyDesc) (int, error) {
	switch b.cfg.Residency {
	case ResidencyDevice:
		return residencyDevice, nil
	case ResidencyPinned:
		return residencyPinned, nil
	}
	desc.residency = residencyDevice
	need, err := b.lib.a.keyDeviceBytes(b.cfg.Device, desc)
	if err != nil {
		return 0, err
	}
	budget := b.cfg.MemoryBudget
	if budget == 0 {
		info, err := b.lib.DeviceInfo(b.cfg.Device)
		if err != nil {
			return 0, err
		}
		reserve := b.cfg.TaskReserve
		if reserve == 0 {
			// room for two tasks (one computing, the next uploading)
			// with their MSMs in order: the least that makes resident
			// parameters pay; the key overlaps its tasks' MSMs only when
			// it finds room for two overlapped ones (C2G_OVERLAP)
			task, err := b.lib.a.descTaskBytes(b.cfg.Device, desc, false)
			if err != nil {
				return 0, err
			}
			reserve = 2 * task
		}
		budget = info.FreeBytes - reserve
	}
	if need <= budget {
		return residencyDevice, nil
	}
	return residencyPinned, nil
}

// key is a proving key loaded on the device.
type key struct {
	b         *Backend
	pk        *groth16.ProvingKey // pinned residency only (nil when resident on the device, or synthetic)
	vk        *groth16.VerifyingKey
	lInput    []curve.G1Affine // coset-Lagrange form: the inputs' L points (groth16.InputL)
	shape     shape
	residency string
	pinner    runtime.Pinner
	ck        cKey
	buffers   []*Buffer // synthetic keys own their parameter buffers

	mu     sync.Mutex
	open   int
	closed bool
}

func (k *key) Residency() string { return k.residency }

// Close frees the key's device memory; every task must be released first.
func (k *key) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	if k.open > 0 {
		return fmt.Errorf("cuda: close key: %d tasks not released", k.open)
	}
	k.closed = true
	k.b.lib.a.keyFree(k.ck)
	k.ck = nil
	k.pinner.Unpin()
	for _, buf := range k.buffers {
		buf.Free()
	}
	return nil
}

// checkWitness validates w against the key: groth16.CheckSynthesized for a
// key whose host points it still holds (pinned), checkSynthetic (the key's
// shape, the same checks) otherwise. Either way w has at least one input
// (the key's ic is never empty).
func (k *key) checkWitness(w *groth16.Synthesized) error {
	if k.pk != nil {
		return groth16.CheckSynthesized(k.pk, w)
	}
	return checkSynthetic(k.shape, w)
}

func checkSynthetic(sh shape, w *groth16.Synthesized) error {
	if w == nil {
		return fmt.Errorf("%w: nil witness", groth16.ErrShape)
	}
	rows := int64(w.NumConstraints + len(w.Input))
	switch {
	case w.NumConstraints < 0:
		return fmt.Errorf("%w: %d constraints", groth16.ErrShape, w.NumConstraints)
	case int64(len(w.Input)) != sh.inputs || int64(len(w.Aux)) != sh.aux:
		return fmt.Errorf("%w: %d inputs and %d aux, key has %d and %d", groth16.ErrShape, len(w.Input), len(w.Aux), sh.inputs, sh.aux)
	case int64(len(w.A)) != rows || int64(len(w.B)) != rows || int64(len(w.C)) != rows || rows > sh.domain:
		return fmt.Errorf("%w: a, b, c have %d, %d, %d rows, want %d <= %d", groth16.ErrShape, len(w.A), len(w.B), len(w.C), rows, sh.domain)
	case int64(w.ADensityAux.Len) != sh.aux || int64(w.BDensityAux.Len) != sh.aux || int64(w.BDensityInput.Len) != sh.inputs,
		!w.ADensityAux.Valid(), !w.BDensityAux.Valid(), !w.BDensityInput.Valid():
		return fmt.Errorf("%w: density bitmaps do not match %d inputs / %d aux", groth16.ErrShape, sh.inputs, sh.aux)
	case sh.inputs+int64(w.ADensityAux.Count()) != sh.numA:
		return fmt.Errorf("%w: a density selects %d points, key has %d", groth16.ErrShape, sh.inputs+int64(w.ADensityAux.Count()), sh.numA)
	case int64(w.BDensityInput.Count()+w.BDensityAux.Count()) != sh.numB:
		return fmt.Errorf("%w: b density selects %d points, key has %d", groth16.ErrShape, w.BDensityInput.Count()+w.BDensityAux.Count(), sh.numB)
	}
	return w.CheckCodeLengths()
}

// Prepare validates w (host only; no device access) and sizes the task.
// w is read again by Upload and must not change before Upload returns;
// after that the task no longer references it (HoldsWitness).
func (k *key) Prepare(ctx context.Context, w *groth16.Synthesized, rnd groth16.Randomness) (groth16.Task, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := k.checkWitness(w); err != nil {
		return nil, err
	}
	rows := int64(w.NumConstraints + len(w.Input))
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errors.New("cuda: prepare: key is closed")
	}
	bytes, err := k.b.lib.a.keyTaskBytes(k.b.cfg.Device, k.ck, rows)
	if err != nil {
		return nil, err
	}
	inputL, err := groth16.InputL(k.lInput, w.Input)
	if err != nil {
		return nil, err
	}
	k.open++
	t := &task{k: k, w: w, rnd: rnd, rows: rows, bytes: bytes, inputL: inputL}
	t.timings.Prepare = time.Since(start)
	return t, nil
}

// task is one proof in flight.
type task struct {
	k     *key
	w     *groth16.Synthesized
	rnd   groth16.Randomness
	rows  int64
	bytes int64
	// inputL is the inputs' share of the L sum (coset-Lagrange keys;
	// groth16.InputL), computed at Prepare
	inputL curve.G1Jac

	ct       cTask
	res      *rawResults
	timings  groth16.Timings
	released bool
}

// rawResults are the device's MSM sums (XYZZ) and device stage times (ms:
// upload, h, msm h, l, a, b_g1, b_g2, compute).
type rawResults struct {
	h, l, a, bg1 [g1XYZZ]byte
	bg2          [g2XYZZ]byte
	ms           [8]float64
	// upload: bytes copied from registered host memory, through staging;
	// bytes of values sent as codes, and the values among them read from
	// host memory (coded other)
	directBytes, stagedBytes int64
	codedBytes, otherValues  int64
	// the L, A and B MSMs ran beside H and the H MSM
	overlapped bool
	// the H MSM's window when it ran on split bases (0: not split)
	hSplitBits int
}

func (t *task) DeviceBytes() int64        { return t.bytes }
func (t *task) HoldsWitness() bool        { return t.w != nil } // groth16.WitnessHolder: until Upload returns
func (t *task) Timings() groth16.Timings  { return t.timings }
func (t *task) dev() int                  { return t.k.b.cfg.Device }
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// Upload allocates the task's device memory (DeviceBytes) and copies the
// witness in.
func (t *task) Upload(ctx context.Context) error {
	if t.released {
		return errors.New("cuda: upload: task released")
	}
	if t.ct != nil {
		return errors.New("cuda: upload: already uploaded")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	ct, err := t.k.b.lib.a.taskCreate(t.dev(), t.k.ck, t.rows)
	if err != nil {
		return err
	}
	t.ct = ct
	err = uploadWitness(t.k.b.lib.a, t.dev(), ct, t.w, t.k.shape.hForm == groth16.HCosetLagrange)
	// The library has copied the witness (or failed): the host arrays are
	// free for the next one (HoldsWitness).
	t.w = nil
	t.timings.Upload = time.Since(start)
	return err
}

// uploadWitness passes w's arrays to the library, pinned for the call (the
// descriptor holding them lives in Go memory); without c when noC (a
// coset-Lagrange key does not read it: c2g.h, C2G_H_COSET_LAGRANGE).
func uploadWitness(a *api, dev int, ct cTask, w *groth16.Synthesized, noC bool) error {
	wp := &witnessPtrs{a: ptr(w.A), b: ptr(w.B), c: ptr(w.C), input: ptr(w.Input), aux: ptr(w.Aux),
		aDensAux: ptr(w.ADensityAux.Words), bDensIn: ptr(w.BDensityInput.Words), bDensAux: ptr(w.BDensityAux.Words)}
	if c := w.Codes; c != nil { // lengths checked with the witness (CheckCodeLengths)
		wp.aCodes, wp.bCodes, wp.cCodes, wp.auxCodes = ptr(c.A), ptr(c.B), ptr(c.C), ptr(c.Aux)
	}
	if noC {
		wp.c, wp.cCodes = nil, nil
	}
	var pin runtime.Pinner
	for _, p := range []unsafe.Pointer{wp.a, wp.b, wp.c, wp.input, wp.aux, wp.aDensAux, wp.bDensIn, wp.bDensAux,
		wp.aCodes, wp.bCodes, wp.cCodes, wp.auxCodes} {
		if p != nil {
			pin.Pin(p)
		}
	}
	defer pin.Unpin()
	return a.taskUpload(dev, ct, wp)
}

// Compute runs the H computation and the MSMs on the device. Cancelling
// ctx stops it at the next step with ctx's error.
func (t *task) Compute(ctx context.Context) error {
	if t.released {
		return errors.New("cuda: compute: task released")
	}
	if t.ct == nil {
		return errors.New("cuda: compute: not uploaded")
	}
	if t.res != nil {
		return errors.New("cuda: compute: already computed")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			t.k.b.lib.a.taskCancel(t.ct)
		case <-done:
		}
	}()
	err := t.k.b.lib.a.taskCompute(t.dev(), t.ct)
	close(done)
	wg.Wait()
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	res, err := t.k.b.lib.a.taskResults(t.dev(), t.ct)
	if err != nil {
		return err
	}
	t.res = res
	t.timings.Compute = time.Since(start)
	t.timings.UploadDirectBytes = res.directBytes
	t.timings.UploadCodedBytes = res.codedBytes
	t.timings.MSMHSplitBits = res.hSplitBits
	t.timings.H = msDuration(res.ms[1])
	t.timings.MSMH = msDuration(res.ms[2])
	t.timings.MSML = msDuration(res.ms[3])
	t.timings.MSMA = msDuration(res.ms[4])
	t.timings.MSMBG1 = msDuration(res.ms[5])
	t.timings.MSMBG2 = msDuration(res.ms[6])
	return nil
}

// DeviceMillis returns the device-side (CUDA event) times of the upload and
// of the whole compute stage, in milliseconds (0 before they ran).
func (t *task) DeviceMillis() (upload, compute float64) {
	if t.res == nil {
		return 0, 0
	}
	return t.res.ms[0], t.res.ms[7]
}

// Overlapped reports whether Compute ran the L, A and B MSMs beside H and
// the H MSM (the key's choice at Load: docs/cuda.md, "Key residency and
// memory plan"); false before Compute.
func (t *task) Overlapped() bool { return t.res != nil && t.res.overlapped }

// Finish assembles the proof on the host from the device's sums.
func (t *task) Finish(ctx context.Context) (*groth16.Proof, error) {
	if t.released {
		return nil, errors.New("cuda: finish: task released")
	}
	if t.res == nil {
		return nil, errors.New("cuda: finish before compute")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	h := g1FromXYZZ(t.res.h[:])
	l := g1FromXYZZ(t.res.l[:])
	l.AddAssign(&t.inputL)
	a := g1FromXYZZ(t.res.a[:])
	b1 := g1FromXYZZ(t.res.bg1[:])
	b2 := g2FromXYZZ(t.res.bg2[:])
	p := groth16.AssembleProof(t.k.vk, &h, &l, &a, &b1, &b2, t.rnd)
	t.timings.Finish = time.Since(start)
	return p, nil
}

// Release frees the task's device memory; safe to call more than once.
func (t *task) Release() {
	if t.released {
		return
	}
	t.released = true
	if t.ct != nil {
		t.k.b.lib.a.taskFree(t.ct)
		t.ct = nil
	}
	t.w = nil
	t.k.mu.Lock()
	t.k.open--
	t.k.mu.Unlock()
}
