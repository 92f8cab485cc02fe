package groth16

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// CPUOption configures the CPU backend.
type CPUOption func(*cpuConfig)

type cpuConfig struct {
	workers int
}

// CPUWorkers sets how many cores the backend plans for (default GOMAXPROCS
// at each Compute).
func CPUWorkers(n int) CPUOption { return func(c *cpuConfig) { c.workers = n } }

// NewCPUBackend returns the pure-Go backend: gnark-crypto FFTs and
// multi-exponentiations on all cores. It is the reference every other
// backend must match byte for byte. Prepare copies what it needs from the
// Synthesized (it is not modified and may be proved again); Upload is a
// no-op; Compute does the FFTs and MSMs; Finish assembles the proof.
func NewCPUBackend(opts ...CPUOption) Backend {
	b := &cpuBackend{}
	for _, o := range opts {
		o(&b.cfg)
	}
	return b
}

type cpuBackend struct{ cfg cpuConfig }

func (b *cpuBackend) Name() string { return "cpu" }

// Load checks the key's shape and precomputes the FFT domain.
func (b *cpuBackend) Load(ctx context.Context, pk *ProvingKey) (Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckProvingKey(pk); err != nil {
		return nil, err
	}
	return &cpuKey{cfg: b.cfg, pk: pk, domain: fft.NewDomain(uint64(pk.DomainSize()))}, nil
}

// DomainSize is the key's evaluation domain n: len(H) + 1 for HMonomial,
// len(H) for HCosetLagrange.
func (pk *ProvingKey) DomainSize() int {
	if pk.HForm == HCosetLagrange {
		return len(pk.H)
	}
	return len(pk.H) + 1
}

// InputL is Σ input_k·lInput_k, what a key in HCosetLagrange form adds to
// the L sum from the public inputs (ProvingKey.LInput; the identity when
// lInput is empty, HMonomial). Backends compute it on the host: a
// partition has a few hundred inputs at most.
func InputL(lInput []curve.G1Affine, input []fr.Element) (curve.G1Jac, error) {
	var sum curve.G1Jac
	if len(lInput) == 0 {
		return sum, nil
	}
	if len(input) != len(lInput) {
		return sum, fmt.Errorf("%w: %d inputs, key's l_input has %d points", ErrShape, len(input), len(lInput))
	}
	var aff curve.G1Affine
	if _, err := aff.MultiExp(lInput, input, ecc.MultiExpConfig{}); err != nil {
		return sum, err
	}
	sum.FromAffine(&aff)
	return sum, nil
}

// CheckProvingKey validates the relations between pk's section lengths: h
// of a power of two minus one points (HMonomial) or of a power of two
// (HCosetLagrange; domain ≤ 2^32), a non-empty ic, l_input as long as ic
// (HCosetLagrange) or empty, b_g1 and b_g2 of one length, a at least as
// long as ic. Errors wrap ErrShape.
func CheckProvingKey(pk *ProvingKey) error {
	if pk == nil {
		return fmt.Errorf("%w: nil proving key", ErrShape)
	}
	// what H and LInput hold per form
	var hWant, lInputWant string
	var lInputs int
	switch pk.HForm {
	case HMonomial:
		hWant, lInputWant = "a power of two minus one", "none in a key of monomial form"
	case HCosetLagrange:
		hWant, lInputWant, lInputs = "a power of two (coset-Lagrange form)", fmt.Sprintf("one per input (%d)", len(pk.VK.IC)), len(pk.VK.IC)
	default:
		return fmt.Errorf("%w: unknown H form %v", ErrShape, pk.HForm)
	}
	n := pk.DomainSize()
	if n < 2 || n&(n-1) != 0 {
		return fmt.Errorf("%w: h has %d points, want %s", ErrShape, len(pk.H), hWant)
	}
	if len(pk.LInput) != lInputs {
		return fmt.Errorf("%w: l_input has %d points, want %s", ErrShape, len(pk.LInput), lInputWant)
	}
	if n > 1<<32 { // Fr has 2-adicity 32
		return fmt.Errorf("%w: domain %d too large", ErrShape, n)
	}
	if len(pk.VK.IC) == 0 {
		return fmt.Errorf("%w: ic is empty", ErrShape)
	}
	if len(pk.BG1) != len(pk.BG2) {
		return fmt.Errorf("%w: b_g1 has %d points, b_g2 %d", ErrShape, len(pk.BG1), len(pk.BG2))
	}
	if len(pk.A) < len(pk.VK.IC) {
		return fmt.Errorf("%w: a has %d points, fewer than the %d inputs", ErrShape, len(pk.A), len(pk.VK.IC))
	}
	return nil
}

type cpuKey struct {
	cfg    cpuConfig
	pk     *ProvingKey
	domain *fft.Domain
	closed atomic.Bool
}

func (k *cpuKey) Residency() string { return "host" }

func (k *cpuKey) Close() error {
	k.closed.Store(true)
	return nil
}

// CheckSynthesized validates w against pk: lengths of the evaluations and
// assignments, density bitmap sizes and their counts against the A and B
// query lengths, and that the constraints fit the domain. Errors wrap
// ErrShape.
func CheckSynthesized(pk *ProvingKey, w *Synthesized) error {
	if err := CheckProvingKey(pk); err != nil {
		return err
	}
	if w == nil {
		return fmt.Errorf("%w: nil witness", ErrShape)
	}
	nIn, nAux := len(pk.VK.IC), len(pk.L)
	rows := w.NumConstraints + len(w.Input)
	switch {
	case len(w.Input) != nIn:
		return fmt.Errorf("%w: %d inputs, key has %d", ErrShape, len(w.Input), nIn)
	case len(w.Aux) != nAux:
		return fmt.Errorf("%w: %d aux variables, key has %d", ErrShape, len(w.Aux), nAux)
	case w.NumConstraints < 0 || len(w.A) != rows || len(w.B) != rows || len(w.C) != rows:
		return fmt.Errorf("%w: a, b, c have %d, %d, %d rows, want constraints + inputs = %d",
			ErrShape, len(w.A), len(w.B), len(w.C), rows)
	case rows > pk.DomainSize():
		return fmt.Errorf("%w: %d rows exceed the key's domain %d", ErrShape, rows, pk.DomainSize())
	case w.ADensityAux.Len != nAux || !w.ADensityAux.Valid():
		return fmt.Errorf("%w: a density has %d bits (%d words), want %d bits and none set beyond", ErrShape, w.ADensityAux.Len, len(w.ADensityAux.Words), nAux)
	case w.BDensityAux.Len != nAux || !w.BDensityAux.Valid():
		return fmt.Errorf("%w: b aux density has %d bits (%d words), want %d bits and none set beyond", ErrShape, w.BDensityAux.Len, len(w.BDensityAux.Words), nAux)
	case w.BDensityInput.Len != nIn || !w.BDensityInput.Valid():
		return fmt.Errorf("%w: b input density has %d bits (%d words), want %d bits and none set beyond", ErrShape, w.BDensityInput.Len, len(w.BDensityInput.Words), nIn)
	}
	if got := nIn + w.ADensityAux.Count(); got != len(pk.A) {
		return fmt.Errorf("%w: a density selects %d points, key's a has %d", ErrShape, got, len(pk.A))
	}
	if got := w.BDensityInput.Count() + w.BDensityAux.Count(); got != len(pk.BG1) {
		return fmt.Errorf("%w: b density selects %d points, key's b_g1 has %d", ErrShape, got, len(pk.BG1))
	}
	return w.CheckCodeLengths()
}

// Prepare validates w and builds the dense scalar vectors and the
// domain-sized a, b, c buffers.
func (k *cpuKey) Prepare(ctx context.Context, w *Synthesized, rnd Randomness) (Task, error) {
	start := time.Now()
	if k.closed.Load() {
		return nil, errors.New("groth16: cpu: key is closed")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckSynthesized(k.pk, w); err != nil {
		return nil, err
	}
	n := int(k.domain.Cardinality)
	t := &cpuTask{key: k, rnd: rnd, nw: workers(k.cfg.workers)}
	var wg sync.WaitGroup
	for i, src := range [3][]fr.Element{w.A, w.B, w.C} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]fr.Element, n)
			copy(buf, src)
			t.abc[i] = buf
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		t.aScalars = make([]fr.Element, 0, len(k.pk.A))
		t.aScalars = append(t.aScalars, w.Input...)
		t.aScalars = appendDense(t.aScalars, w.Aux, w.ADensityAux)
	}()
	go func() {
		defer wg.Done()
		t.bScalars = make([]fr.Element, 0, len(k.pk.BG1))
		t.bScalars = appendDense(t.bScalars, w.Input, w.BDensityInput)
		t.bScalars = appendDense(t.bScalars, w.Aux, w.BDensityAux)
	}()
	t.aux = w.Aux
	inputL, err := InputL(k.pk.LInput, w.Input)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	t.inputL = inputL
	t.timings.Prepare = time.Since(start)
	return t, nil
}

// appendDense appends the values whose bit is set in d.
func appendDense(dst, src []fr.Element, d Bitmap) []fr.Element {
	for wi, word := range d.Words {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			dst = append(dst, src[wi*64+b])
			word &= word - 1
		}
	}
	return dst
}

type cpuTask struct {
	key *cpuKey
	rnd Randomness
	nw  int

	abc                [3][]fr.Element
	aScalars, bScalars []fr.Element
	aux                []fr.Element

	// inputL is Σ input_k·LInput_k (InputL), added to sumL.
	inputL                  curve.G1Jac
	computed                bool
	sumH, sumL, sumA, sumB1 curve.G1Jac
	sumB2                   curve.G2Jac

	timings  Timings
	released bool
}

func (t *cpuTask) DeviceBytes() int64 { return 0 }

// HoldsWitness: Prepare copies A, B, C and the dense scalars; Aux is read
// by the L MSM until Compute returns (groth16.WitnessHolder).
func (t *cpuTask) HoldsWitness() bool { return t.aux != nil }

func (t *cpuTask) Upload(ctx context.Context) error {
	if t.released {
		return errors.New("groth16: cpu: task released")
	}
	return ctx.Err()
}

func (t *cpuTask) Timings() Timings { return t.timings }

func (t *cpuTask) Release() {
	t.released = true
	t.abc = [3][]fr.Element{}
	t.aScalars, t.bScalars, t.aux = nil, nil, nil
}

// Compute runs the H computation and the five MSMs. The MSMs that do not
// need h (A, B_G1, B_G2, L) start together with the FFTs, the H MSM when h
// is ready; each timing is the wall time of its own (overlapping) work.
func (t *cpuTask) Compute(ctx context.Context) error {
	if t.released {
		return errors.New("groth16: cpu: task released")
	}
	if t.computed {
		return errors.New("groth16: cpu: task already computed")
	}
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return err
	}
	pk := t.key.pk
	nw := t.nw
	g1Tasks := max(1, nw/2)
	hTasks := nw
	g2Tasks := nw
	if nw <= 16 {
		g2Tasks = 2 * nw
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	run := func(d *time.Duration, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := time.Now()
			if err := f(); err != nil {
				fail(err)
			}
			*d = time.Since(s)
		}()
	}

	// The MSMs that do not need h start with the FFTs: the G2 MSM is the
	// critical path, and the FFTs leave cores idle between passes.
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run(&t.timings.MSMBG2, func() error { return msmWitness(mctx, &t.sumB2, pk.BG2, t.bScalars, g2Tasks) })
	run(&t.timings.MSML, func() error { return msmWitness(mctx, &t.sumL, pk.L, t.aux, g1Tasks) })
	run(&t.timings.MSMA, func() error { return msmWitness(mctx, &t.sumA, pk.A, t.aScalars, g1Tasks) })
	run(&t.timings.MSMBG1, func() error { return msmWitness(mctx, &t.sumB1, pk.BG1, t.bScalars, g1Tasks) })
	hStart := time.Now()
	var h []fr.Element
	var err error
	if pk.HForm == HCosetLagrange {
		h, err = lagrangeHScalars(ctx, t.key.domain, &t.abc, nw)
	} else {
		h, err = computeH(ctx, t.key.domain, &t.abc, nw)
	}
	t.timings.H = time.Since(hStart)
	if err != nil {
		cancel()
		wg.Wait()
		return err
	}
	run(&t.timings.MSMH, func() error { return multiExp(mctx, &t.sumH, pk.H, h, hTasks) })
	wg.Wait()
	// Nothing reads the witness or the scalars any more (HoldsWitness).
	t.abc = [3][]fr.Element{}
	t.aScalars, t.bScalars, t.aux = nil, nil, nil
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	t.computed = true
	t.timings.Compute = time.Since(start)
	return nil
}

// computeH returns the n−1 coefficients of h = (a·b − c)/Z, overwriting the
// buffers, with six FFTs instead of the usual seven: a·b = P_lo + xⁿ·P_hi
// (P_lo, P_hi of degree < n) and xⁿ = gⁿ on the coset g·<ω>, so the inverse
// coset FFT of the pointwise product of a's and b's coset evaluations is R
// = P_lo + gⁿ·P_hi; with C the interpolant of c, a·b − c = Z·P_hi + (P_lo +
// P_hi − C) and h = (R − C)/(gⁿ − 1) coefficient by coefficient — what
// (a·b − c)/(gⁿ − 1) on the coset transformed back gives, for any a, b, c,
// without the coset FFT of c. The CUDA backend computes the same
// (cuda/src/ntt.cu, compute_h).
func computeH(ctx context.Context, d *fft.Domain, abc *[3][]fr.Element, nw int) ([]fr.Element, error) {
	a, b, c := abc[0], abc[1], abc[2]
	if err := cosetProduct(ctx, d, a, b, nw); err != nil {
		return nil, err
	}
	opt := fft.WithNbTasks(nw)
	d.FFTInverse(c, fft.DIF, opt) // C's coefficients, bit-reversed
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := len(a)
	chunk := max(1<<12, n/(4*nw))
	d.FFTInverse(a, fft.DIF, fft.OnCoset(), opt) // R's coefficients, bit-reversed like c's
	var den, one fr.Element
	one.SetOne()
	den.Exp(d.FrMultiplicativeGen, big.NewInt(int64(n)))
	den.Sub(&den, &one).Inverse(&den)
	if err := parallelRange(ctx, n, chunk, nw, func(s, e int) error {
		for i := s; i < e; i++ {
			a[i].Sub(&a[i], &c[i]).Mul(&a[i], &den)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	fft.BitReverse(a)
	if !a[n-1].IsZero() {
		// deg(a·b − c) ≤ 2n − 2, so deg h ≤ n − 2: a non-zero top coefficient
		// means a·b ≠ c somewhere on the domain.
		return nil, fmt.Errorf("%w: h has degree n−1", ErrUnsatisfied)
	}
	return a[:n-1], nil
}

// lagrangeHScalars returns A(g·ω^i)·B(g·ω^i) for i < n, the H MSM's scalars
// for a key in HCosetLagrange form, overwriting a and b: four FFTs. It
// first checks a_j·b_j = c_j on the domain — what makes the coset product
// (gⁿ − 1)·h + C with deg h ≤ n − 2 (HCosetLagrange) —, the test
// computeH's top coefficient makes in monomial form.
func lagrangeHScalars(ctx context.Context, d *fft.Domain, abc *[3][]fr.Element, nw int) ([]fr.Element, error) {
	a, b, c := abc[0], abc[1], abc[2]
	n := len(a)
	chunk := max(1<<12, n/(4*nw))
	var bad atomic.Int64
	bad.Store(-1)
	if err := parallelRange(ctx, n, chunk, nw, func(s, e int) error {
		var p fr.Element
		for i := s; i < e; i++ {
			if p.Mul(&a[i], &b[i]); !p.Equal(&c[i]) {
				bad.CompareAndSwap(-1, int64(i))
				return nil
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if i := bad.Load(); i >= 0 {
		return nil, fmt.Errorf("%w: a·b ≠ c in row %d", ErrUnsatisfied, i)
	}
	if err := cosetProduct(ctx, d, a, b, nw); err != nil {
		return nil, err
	}
	return a, nil
}

// cosetProduct overwrites a with A(g·ω^i)·B(g·ω^i) for i < n (natural
// order) and b with B's coset evaluations: the four FFTs both H forms
// start with.
func cosetProduct(ctx context.Context, d *fft.Domain, a, b []fr.Element, nw int) error {
	opt := fft.WithNbTasks(nw)
	for _, v := range [][]fr.Element{a, b} {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.FFTInverse(v, fft.DIF, opt)         // coefficients, bit-reversed
		d.FFT(v, fft.DIT, fft.OnCoset(), opt) // coset evaluations, natural order
	}
	n := len(a)
	return parallelRange(ctx, n, max(1<<12, n/(4*nw)), nw, func(s, e int) error {
		for i := s; i < e; i++ {
			a[i].Mul(&a[i], &b[i])
		}
		return nil
	})
}

// Finish assembles A = α + ΣA + rδ, B = β + ΣB + sδ,
// C = ΣH + ΣL + s·A + r·B_G1 − rs·δ (B_G1 = β + ΣB_G1 + sδ).
func (t *cpuTask) Finish(ctx context.Context) (*Proof, error) {
	if t.released {
		return nil, errors.New("groth16: cpu: task released")
	}
	if !t.computed {
		return nil, errors.New("groth16: cpu: Finish before Compute")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	sumL := t.sumL
	sumL.AddAssign(&t.inputL)
	p := AssembleProof(&t.key.pk.VK, &t.sumH, &sumL, &t.sumA, &t.sumB1, &t.sumB2, t.rnd)
	t.timings.Finish = time.Since(start)
	return p, nil
}

// AssembleProof is the host epilogue every backend shares: from the MSM sums
// it computes A = α + ΣA + rδ, B = β + ΣB_G2 + sδ and
// C = ΣH + ΣL + s·A + r·(β + ΣB_G1 + sδ) − rs·δ.
func AssembleProof(vk *VerifyingKey, sumH, sumL, sumA, sumB1 *curve.G1Jac, sumB2 *curve.G2Jac, rnd Randomness) *Proof {
	var r, s, rs big.Int
	rnd.R.BigInt(&r)
	rnd.S.BigInt(&s)
	var rsE fr.Element
	rsE.Mul(&rnd.R, &rnd.S)
	rsE.BigInt(&rs)

	var delta1 curve.G1Jac
	delta1.FromAffine(&vk.DeltaG1)
	var a, b1, c, tmp curve.G1Jac
	a.Set(sumA)
	a.AddMixed(&vk.AlphaG1)
	tmp.ScalarMultiplication(&delta1, &r)
	a.AddAssign(&tmp)

	b1.Set(sumB1)
	b1.AddMixed(&vk.BetaG1)
	tmp.ScalarMultiplication(&delta1, &s)
	b1.AddAssign(&tmp)

	var delta2, b2, tmp2 curve.G2Jac
	delta2.FromAffine(&vk.DeltaG2)
	b2.Set(sumB2)
	b2.AddMixed(&vk.BetaG2)
	tmp2.ScalarMultiplication(&delta2, &s)
	b2.AddAssign(&tmp2)

	c.Set(sumH)
	c.AddAssign(sumL)
	tmp.ScalarMultiplication(&a, &s)
	c.AddAssign(&tmp)
	tmp.ScalarMultiplication(&b1, &r)
	c.AddAssign(&tmp)
	tmp.ScalarMultiplication(&delta1, &rs)
	c.SubAssign(&tmp)

	p := &Proof{}
	p.A.FromJacobian(&a)
	p.B.FromJacobian(&b2)
	p.C.FromJacobian(&c)
	return p
}

// NewRandomness draws the blinding pair (r, s) from crypto/rand.
func NewRandomness() (Randomness, error) {
	var rnd Randomness
	if _, err := rnd.R.SetRandom(); err != nil {
		return rnd, fmt.Errorf("groth16: randomness: %w", err)
	}
	if _, err := rnd.S.SetRandom(); err != nil {
		return rnd, fmt.Errorf("groth16: randomness: %w", err)
	}
	return rnd, nil
}

// Prove runs every stage of key's backend on w and always releases the
// task. It returns the proof and the per-stage timings.
func Prove(ctx context.Context, key Key, w *Synthesized, rnd Randomness) (*Proof, Timings, error) {
	task, err := key.Prepare(ctx, w, rnd)
	if err != nil {
		return nil, Timings{}, err
	}
	defer task.Release()
	s := time.Now()
	if err := task.Upload(ctx); err != nil {
		return nil, task.Timings(), err
	}
	up := time.Since(s)
	if err := task.Compute(ctx); err != nil {
		return nil, task.Timings(), err
	}
	p, err := task.Finish(ctx)
	tm := task.Timings()
	if tm.Upload == 0 {
		tm.Upload = up
	}
	return p, tm, err
}
