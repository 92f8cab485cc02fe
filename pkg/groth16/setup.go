package groth16

import (
	"context"
	"crypto/rand"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"sync"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// SetupOption configures Setup.
type SetupOption func(*setupConfig)

type setupConfig struct {
	seed      []byte
	progress  Progress
	workers   int
	fixedBase FixedBase
	hForm     HForm
}

// SetupSeed makes the toxic waste a deterministic function of seed. For
// tests and reproducible fixtures only: anyone who knows the seed can forge
// proofs.
func SetupSeed(seed []byte) SetupOption {
	return func(c *setupConfig) { c.seed = append([]byte(nil), seed...) }
}

// SetupProgress reports progress of the long stages ("setup: lagrange",
// "setup: qap", "setup: g1", "setup: g2").
func SetupProgress(p Progress) SetupOption { return func(c *setupConfig) { c.progress = p } }

// SetupWorkers bounds the goroutines of setup (default GOMAXPROCS).
func SetupWorkers(n int) SetupOption { return func(c *setupConfig) { c.workers = n } }

// SetupFixedBase runs the fixed-base scalar multiplications (every point of
// the parameters: the bulk of a large setup) on fb instead of the CPU; nil
// keeps the CPU. The comb tables are still built on the CPU.
func SetupFixedBase(fb FixedBase) SetupOption { return func(c *setupConfig) { c.fixedBase = fb } }

// SetupHForm chooses the H query's form (default HMonomial, bellperson's;
// HCosetLagrange saves the prover two of its six NTTs, ProvingKey.HForm).
// The toxic waste does not depend on it: one seed gives keys of both forms
// that prove the same proofs.
func SetupHForm(f HForm) SetupOption { return func(c *setupConfig) { c.hForm = f } }

// toxicWaste is the secret of a setup.
type toxicWaste struct {
	tau, alpha, beta, gamma, delta fr.Element
}

// scalarSource draws field elements: SHA-512 of (seed, label, counter)
// reduced mod r when seeded, crypto/rand otherwise. Zero is never returned.
type scalarSource struct {
	seed []byte
	ctr  uint64
}

func (s *scalarSource) next(label string) (fr.Element, error) {
	for {
		var buf [64]byte
		if s.seed == nil {
			if _, err := io.ReadFull(rand.Reader, buf[:]); err != nil {
				return fr.Element{}, fmt.Errorf("groth16: setup: randomness: %w", err)
			}
		} else {
			h := sha512.New()
			h.Write([]byte("c2cluster groth16 setup v1\x00"))
			h.Write(s.seed)
			h.Write([]byte{0})
			h.Write([]byte(label))
			var c [8]byte
			binary.BigEndian.PutUint64(c[:], s.ctr)
			s.ctr++
			h.Write(c[:])
			copy(buf[:], h.Sum(nil))
		}
		var e fr.Element
		e.SetBytes(buf[:]) // 512 bits reduced mod r: negligible bias
		if !e.IsZero() {
			return e, nil
		}
	}
}

func sampleToxicWaste(seed []byte, n uint64) (toxicWaste, error) {
	src := &scalarSource{seed: seed}
	var tw toxicWaste
	var err error
	one := fr.One()
	_, gn := cosetShift(n)
	for {
		if tw.tau, err = src.next("tau"); err != nil {
			return tw, err
		}
		// tau must lie outside the domain, Z(tau) = tau^n − 1 ≠ 0, and
		// outside the coset g·<ω> of the HCosetLagrange form, tau^n ≠ g^n.
		var z fr.Element
		z.Exp(tw.tau, new(big.Int).SetUint64(n))
		if !z.Equal(&one) && !z.Equal(&gn) {
			break
		}
	}
	for _, p := range []struct {
		e     *fr.Element
		label string
	}{{&tw.alpha, "alpha"}, {&tw.beta, "beta"}, {&tw.gamma, "gamma"}, {&tw.delta, "delta"}} {
		if *p.e, err = src.next(p.label); err != nil {
			return tw, err
		}
	}
	return tw, nil
}

// cosetShift is the coset g·<ω> of the HCosetLagrange form's g (gnark's
// FrMultiplicativeGen, the provers' coset shift) and gⁿ, the value xⁿ
// takes on it.
func cosetShift(n uint64) (g, gn fr.Element) {
	g = fft.GeneratorFullMultiplicativeGroup()
	gn.Exp(g, new(big.Int).SetUint64(n))
	return g, gn
}

// SetupR1CS generates Groth16 parameters for sys with bellperson's
// generator rules, and returns them with the densities every Synthesized
// of the circuit must carry:
//   - input 0 is ONE; every input i gets the row input_i · 0 = 0 after
//     the circuit's constraints, and the domain n is the next power of two
//     ≥ constraints + inputs;
//   - u_k, v_k, w_k are variable k's A, B and C polynomials at τ (Lagrange
//     basis of the domain); H has n − 1 points τ^i·Z(τ)/δ, IC one per
//     input (β·u + α·v + w)/γ, L one per aux variable (β·u + α·v + w)/δ;
//   - A holds u_k(τ) of the variables (inputs, then aux) with u_k(τ) ≠ 0,
//     B_G1 and B_G2 v_k(τ) of those with v_k(τ) ≠ 0: bellperson filters
//     the identity points out;
//   - an aux variable whose L point is the identity (one in no
//     constraint) is refused, ErrUnconstrainedVariable naming it.
//
// The prover's densities are presence: a variable is in A (B) when it is
// a term of some A (B) combination with a non-zero coefficient, as
// bellperson's prover (eval_with_trackers) counts it. SetupR1CS computes
// both and refuses a circuit where they differ (ErrDensityMismatch, naming
// the variable: one whose non-zero A or B coefficients cancel out over
// the domain), since no proof of it could verify.
//
// The toxic waste τ, α, β, γ, δ is fresh from crypto/rand unless
// SetupSeed is given; the generators are the standard ones. The result's
// VK field is the verifying key; with SetupHForm(HCosetLagrange) its H, L
// and LInput are in coset-Lagrange form (the same proofs). An error of sys.Terms is returned wrapped
// (naming the matrix), as is the context's when it is done; a term outside
// the system's counts is an error naming its constraint.
func SetupR1CS(ctx context.Context, sys R1CS, opts ...SetupOption) (*ProvingKey, *Densities, error) {
	var cfg setupConfig
	for _, o := range opts {
		o(&cfg)
	}
	if sys == nil {
		return nil, nil, fmt.Errorf("groth16: setup: nil constraint system")
	}
	if cfg.hForm != HMonomial && cfg.hForm != HCosetLagrange {
		return nil, nil, fmt.Errorf("groth16: setup: unknown H form %v", cfg.hForm)
	}
	lagrangeH := cfg.hForm == HCosetLagrange
	nw := workers(cfg.workers)
	m, nIn, nAux := sys.NumConstraints(), sys.NumInputs(), sys.NumAux()
	if m < 0 || nIn < 1 || nAux < 0 {
		return nil, nil, fmt.Errorf("groth16: setup: system of %d constraints, %d inputs and %d aux variables (ONE is input 0)", m, nIn, nAux)
	}
	if nIn > r1cs.MaxIndex+1 || nAux > r1cs.MaxIndex+1 {
		return nil, nil, fmt.Errorf("groth16: setup: %d inputs and %d aux variables, at most %d of each", nIn, nAux, r1cs.MaxIndex+1)
	}
	rows := m + nIn
	n := domainSize(rows)
	if n > 1<<32 {
		return nil, nil, fmt.Errorf("groth16: setup: domain of %d points too large (at most 2^32)", n)
	}
	omega, err := fft.Generator(uint64(n))
	if err != nil {
		return nil, nil, fmt.Errorf("groth16: setup: domain of size %d: %w", n, err)
	}
	tw, err := sampleToxicWaste(cfg.seed, uint64(n))
	if err != nil {
		return nil, nil, err
	}

	// Lagrange basis at tau: L_j(tau) = (tau^n − 1)/n · ω^j / (tau − ω^j).
	var zTau, nInv fr.Element
	zTau.Exp(tw.tau, new(big.Int).SetUint64(uint64(n)))
	one := fr.One()
	zTau.Sub(&zTau, &one)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	var zOverN fr.Element
	zOverN.Mul(&zTau, &nInv)
	lag := make([]fr.Element, rows)
	pr := newProgressReporter(cfg.progress, "setup: lagrange", int64(rows))
	err = parallelRange(ctx, rows, 1<<14, nw, func(start, end int) error {
		var wj fr.Element
		wj.Exp(omega, big.NewInt(int64(start)))
		pows := make([]fr.Element, end-start)
		den := make([]fr.Element, end-start)
		for j := range den {
			pows[j] = wj
			den[j].Sub(&tw.tau, &wj)
			wj.Mul(&wj, &omega)
		}
		inv := fr.BatchInvert(den)
		for j := range inv {
			lag[start+j].Mul(&pows[j], &inv[j]).Mul(&lag[start+j], &zOverN)
		}
		pr.add(int64(end - start))
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("groth16: setup: %w", err)
	}

	// QAP at tau: u_k, v_k, w_k for every variable (inputs, then aux), and
	// the prover's densities (presence in A and B).
	nWires := nIn + nAux
	u := make([]fr.Element, nWires)
	v := make([]fr.Element, nWires)
	w := make([]fr.Element, nWires)
	dens := newDensities(nIn, nAux)
	if err := evalQAP(ctx, sys, lag[:m], [3][]fr.Element{u, v, w}, dens, cfg.progress); err != nil {
		return nil, nil, err
	}
	// Input constraints input_i · 0 = 0: only A gets a term.
	for i := 0; i < nIn; i++ {
		u[i].Add(&u[i], &lag[m+i])
	}
	lag = nil

	// Scalars of every G1 query.
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.gamma)
	deltaInv.Inverse(&tw.delta)
	// (beta·u + alpha·v + w) / gamma for inputs, / delta for aux. In
	// coset-Lagrange form (ProvingKey.HForm) the aux get −kappa·w/delta
	// more and the inputs' −kappa·w/delta make LInput, kappa = Z(tau)/(g^n − 1).
	// The same pass checks the densities against the evaluations and
	// finds the unconstrained aux variables (first of each, by index).
	var kappa fr.Element
	g, gn := cosetShift(uint64(n))
	kappa.Sub(&gn, &one).Inverse(&kappa).Mul(&kappa, &zTau)
	var mKappaDelta fr.Element // −kappa/delta
	mKappaDelta.Mul(&kappa, &deltaInv).Neg(&mKappaDelta)
	icSc := make([]fr.Element, nIn)
	lSc := make([]fr.Element, nAux)
	var liSc []fr.Element
	if lagrangeH {
		liSc = make([]fr.Element, nIn)
	}
	var (
		mu                        sync.Mutex
		firstMismatch, firstUnset = nWires, nWires
	)
	_ = parallelRange(context.Background(), nWires, 1<<14, nw, func(start, end int) error {
		var t, s, k fr.Element
		mismatch, unset := nWires, nWires
		for i := start; i < end; i++ {
			if mismatch == nWires && !densityMatches(dens, nIn, i, &u[i], &v[i]) {
				mismatch = i
			}
			t.Mul(&tw.beta, &u[i])
			s.Mul(&tw.alpha, &v[i])
			t.Add(&t, &s).Add(&t, &w[i])
			if lagrangeH {
				k.Mul(&w[i], &mKappaDelta)
			}
			if i < nIn {
				icSc[i].Mul(&t, &gammaInv)
				if lagrangeH {
					liSc[i] = k
				}
			} else {
				if unset == nWires && t.IsZero() {
					unset = i
				}
				lSc[i-nIn].Mul(&t, &deltaInv)
				if lagrangeH {
					lSc[i-nIn].Add(&lSc[i-nIn], &k)
				}
			}
		}
		mu.Lock()
		firstMismatch, firstUnset = min(firstMismatch, mismatch), min(firstUnset, unset)
		mu.Unlock()
		return nil
	})
	if firstMismatch < nWires {
		return nil, nil, densityError(dens, nIn, firstMismatch, &u[firstMismatch])
	}
	if firstUnset < nWires {
		return nil, nil, fmt.Errorf("%w: aux %d is in no constraint (its L point is the identity; bellperson refuses the circuit)", ErrUnconstrainedVariable, firstUnset-nIn)
	}
	// The A and B queries keep the variables of the densities (equal to
	// those of non-zero evaluation, as checked), as the prover's dense
	// scalar vectors do (cpuKey.Prepare).
	aSc := make([]fr.Element, 0, nIn+dens.ADensityAux.Count())
	aSc = append(aSc, u[:nIn]...)
	aSc = appendDense(aSc, u[nIn:], dens.ADensityAux)
	bSc := make([]fr.Element, 0, dens.BDensityInput.Count()+dens.BDensityAux.Count())
	bSc = appendDense(bSc, v[:nIn], dens.BDensityInput)
	bSc = appendDense(bSc, v[nIn:], dens.BDensityAux)
	u, v, w = nil, nil, nil
	var hSc []fr.Element
	if lagrangeH {
		hSc = cosetLagrangeH(tw.tau, g, gn, omega, n, &kappa, &deltaInv, nw)
	} else {
		// tau^i · Z(tau) / delta for i < n − 1.
		hSc = make([]fr.Element, n-1)
		var zd fr.Element
		zd.Mul(&zTau, &deltaInv)
		_ = parallelRange(context.Background(), n-1, 1<<14, nw, func(start, end int) error {
			var p fr.Element
			p.Exp(tw.tau, big.NewInt(int64(start)))
			p.Mul(&p, &zd)
			for i := start; i < end; i++ {
				hSc[i] = p
				p.Mul(&p, &tw.tau)
			}
			return nil
		})
	}

	_, _, g1, g2 := curve.Generators()
	pk := &ProvingKey{HForm: cfg.hForm}
	total := len(aSc) + len(bSc) + len(icSc) + len(lSc) + len(hSc) + len(liSc)
	fb1, err := newG1FixedBase(ctx, &g1, total, nw)
	if err != nil {
		return nil, nil, fmt.Errorf("groth16: setup: %w", err)
	}
	pr = newProgressReporter(cfg.progress, "setup: g1", int64(total))
	// Each query's points are allocated when its turn comes and its scalars
	// dropped after it (bSc stays for G2), so the peak holds the points made
	// so far and the scalars still to go, not both in full (at the 32 GiB
	// shape about 12 GB less).
	type query struct {
		sc   *[]fr.Element
		out  *[]curve.G1Affine
		keep bool
	}
	queries := []query{{&hSc, &pk.H, false}, {&lSc, &pk.L, false}, {&aSc, &pk.A, false}, {&bSc, &pk.BG1, true}, {&icSc, &pk.VK.IC, false}}
	if lagrangeH {
		queries = append(queries, query{&liSc, &pk.LInput, false})
	}
	for _, q := range queries {
		sc := *q.sc
		out := make([]curve.G1Affine, len(sc))
		*q.out = out
		if cfg.fixedBase != nil {
			err = fixedBaseChunks(ctx, len(sc), pr, func(s, e int) error {
				return cfg.fixedBase.MulG1(fb1.table, fb1.c, fb1.k, sc[s:e], out[s:e])
			})
		} else {
			err = fb1.mul(ctx, sc, out, nw, pr)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("groth16: setup: %w", err)
		}
		if !q.keep {
			*q.sc = nil
		}
	}
	pk.BG2 = make([]curve.G2Affine, len(bSc))
	fb1 = nil
	fb2, err := newG2FixedBase(ctx, &g2, len(bSc), nw)
	if err != nil {
		return nil, nil, fmt.Errorf("groth16: setup: %w", err)
	}
	pr = newProgressReporter(cfg.progress, "setup: g2", int64(len(bSc)))
	if cfg.fixedBase != nil {
		err = fixedBaseChunks(ctx, len(bSc), pr, func(s, e int) error {
			return cfg.fixedBase.MulG2(fb2.table, fb2.c, fb2.k, bSc[s:e], pk.BG2[s:e])
		})
	} else {
		err = fb2.mul(ctx, bSc, pk.BG2, nw, pr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("groth16: setup: %w", err)
	}
	vkG1 := curve.BatchScalarMultiplicationG1(&g1, []fr.Element{tw.alpha, tw.beta, tw.delta})
	vkG2 := curve.BatchScalarMultiplicationG2(&g2, []fr.Element{tw.beta, tw.gamma, tw.delta})
	pk.VK.AlphaG1, pk.VK.BetaG1, pk.VK.DeltaG1 = vkG1[0], vkG1[1], vkG1[2]
	pk.VK.BetaG2, pk.VK.GammaG2, pk.VK.DeltaG2 = vkG2[0], vkG2[1], vkG2[2]
	return pk, dens, nil
}

// evalQAP accumulates each matrix's polynomials at tau, dst[k][variable]
// += c·lag[row] over sys's terms of matrix k (the three concurrently),
// and records the presence densities of A (aux) and B. Progress and
// cancellation go by blocks of 2^16 rows.
func evalQAP(ctx context.Context, sys R1CS, lag []fr.Element, dst [3][]fr.Element, d *Densities, progress Progress) error {
	m := len(lag)
	nIn, nAux := d.BDensityInput.Len, d.BDensityAux.Len
	pr := newProgressReporter(progress, "setup: qap", 3*int64(m))
	var errs [3]error
	var wg sync.WaitGroup
	for k := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inputs, aux *Bitmap // presence, where the prover counts it
			switch k {
			case MatrixA:
				aux = &d.ADensityAux
			case MatrixB:
				inputs, aux = &d.BDensityInput, &d.BDensityAux
			}
			acc := dst[k]
			last, reported := -1, 0
			err := sys.Terms(k, func(row int, v r1cs.Variable, c *fr.Element) error {
				if row != last {
					if uint(row) >= uint(m) {
						return fmt.Errorf("term of constraint %d, the system has %d", row, m)
					}
					if row>>16 != last>>16 {
						pr.add(int64(row - reported))
						reported = row
						if err := ctx.Err(); err != nil {
							return err
						}
					}
					last = row
				}
				i := v.Index()
				present := !c.IsZero() // bellperson's prover skips zero coefficients
				if v.IsInput() {
					if i >= nIn {
						return fmt.Errorf("constraint %d: term of input %d, the system has %d inputs", row, i, nIn)
					}
					if inputs != nil && present {
						inputs.Set(i)
					}
				} else {
					if i >= nAux {
						return fmt.Errorf("constraint %d: term of aux %d, the system has %d aux variables", row, i, nAux)
					}
					if aux != nil && present {
						aux.Set(i)
					}
					i += nIn
				}
				addMul(&acc[i], c, &lag[row])
				return nil
			})
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				errs[k] = fmt.Errorf("groth16: setup: matrix %c: %w", "ABC"[k], err)
			}
			pr.add(int64(m - reported))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var minusOne = func() (e fr.Element) { e.SetOne(); e.Neg(&e); return }()

// addMul adds c·l to dst, with shortcuts for the coefficients ±1 and 0.
func addMul(dst, c, l *fr.Element) {
	switch {
	case c.IsOne():
		dst.Add(dst, l)
	case c.Equal(&minusOne):
		dst.Sub(dst, l)
	case c.IsZero():
	default:
		var t fr.Element
		t.Mul(c, l)
		dst.Add(dst, &t)
	}
}

// densityMatches reports whether variable i (inputs, then aux) is in the
// prover's A and B densities exactly when its u(tau), v(tau) are non-zero
// (every input is in A, through its input row).
func densityMatches(d *Densities, nIn, i int, u, v *fr.Element) bool {
	if i < nIn {
		return !u.IsZero() && d.BDensityInput.Get(i) == !v.IsZero()
	}
	return d.ADensityAux.Get(i-nIn) == !u.IsZero() && d.BDensityAux.Get(i-nIn) == !v.IsZero()
}

// densityError describes variable i's mismatch (densityMatches false).
func densityError(d *Densities, nIn, i int, u *fr.Element) error {
	name, inA, inB := fmt.Sprintf("input %d", i), true, false
	if i < nIn {
		inB = d.BDensityInput.Get(i)
	} else {
		name = fmt.Sprintf("aux %d", i-nIn)
		inA, inB = d.ADensityAux.Get(i-nIn), d.BDensityAux.Get(i-nIn)
	}
	m, p, present := "A", "u", inA
	if inA == !u.IsZero() {
		m, p, present = "B", "v", inB
	}
	if present {
		return fmt.Errorf("%w: %s is a term of %s but %s(τ) = 0 (its coefficients there are zero or cancel): "+
			"bellperson's key leaves its %s point out while the prover's density counts it", ErrDensityMismatch, name, m, p, m)
	}
	return fmt.Errorf("%w: %s is in no %s combination but %s(τ) ≠ 0", ErrDensityMismatch, name, m, p)
}

// cosetLagrangeH returns the H query's scalars in coset-Lagrange form:
// ℓ_i(τ)·κ/δ for i < n, ℓ_i the Lagrange basis of the coset g·<ω> at x_i
// = g·ω^i, ℓ_i(τ) = x_i·(τⁿ − gⁿ) / (n·gⁿ·(τ − x_i)).
func cosetLagrangeH(tau, g, gn, omega fr.Element, n int, kappa, deltaInv *fr.Element, nw int) []fr.Element {
	var c, t fr.Element // c = (τⁿ − gⁿ)·κ / (n·gⁿ·δ)
	c.Exp(tau, big.NewInt(int64(n))).Sub(&c, &gn)
	t.SetUint64(uint64(n)).Mul(&t, &gn).Inverse(&t)
	c.Mul(&c, &t).Mul(&c, kappa).Mul(&c, deltaInv)
	hSc := make([]fr.Element, n)
	_ = parallelRange(context.Background(), n, 1<<14, nw, func(start, end int) error {
		var x fr.Element
		x.Exp(omega, big.NewInt(int64(start))).Mul(&x, &g)
		xs := make([]fr.Element, end-start)
		den := make([]fr.Element, end-start)
		for j := range den {
			xs[j] = x
			den[j].Sub(&tau, &x)
			x.Mul(&x, &omega)
		}
		inv := fr.BatchInvert(den)
		for j := range inv {
			hSc[start+j].Mul(&xs[j], &inv[j]).Mul(&hSc[start+j], &c)
		}
		return nil
	})
	return hSc
}
