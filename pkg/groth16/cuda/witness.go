package cuda

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// SyntheticShape is the shape of a parameter set made of random points, for
// benchmarks at sizes no setup could produce in reasonable time.
type SyntheticShape struct {
	Domain int // evaluation domain, a power of two (|H| = Domain − 1, or Domain in coset-Lagrange form)
	Inputs int // public inputs including the constant one (|IC|)
	Aux    int // aux variables (|L|)
	A      int // |A| = Inputs + the aux variables in the A density
	B      int // |B_G1| = |B_G2|
	// HForm is the key's H form (groth16.ProvingKey.HForm): coset-Lagrange
	// keys get Domain H points and Inputs LInput points.
	HForm groth16.HForm
}

func (s SyntheticShape) check() error {
	switch {
	case s.Domain < 2 || s.Domain&(s.Domain-1) != 0 || s.Domain > 1<<27:
		return fmt.Errorf("%w: synthetic domain %d is not a power of two in [2, 2^27]", groth16.ErrShape, s.Domain)
	case s.HForm != groth16.HMonomial && s.HForm != groth16.HCosetLagrange:
		return fmt.Errorf("%w: synthetic key of unknown H form %v", groth16.ErrShape, s.HForm)
	case s.Inputs < 1 || s.Aux < 0 || s.A < s.Inputs || s.A > s.Inputs+s.Aux || s.B < 0 || s.B > s.Inputs+s.Aux:
		return fmt.Errorf("%w: synthetic shape %+v is inconsistent", groth16.ErrShape, s)
	}
	return nil
}

// ValueProfile is how a synthetic vector's values are drawn: Frac01 of them
// 0 or 1 (half each), FracMinusOne r − 1, FracTwo 2, the rest random. The
// zero profile draws every value at random.
type ValueProfile struct {
	Frac01, FracMinusOne float64
	FracTwo              float64
}

// draw sets x to a value drawn with profile p.
func (p ValueProfile) draw(r *rand.Rand, x *fr.Element) {
	switch u := r.Float64(); {
	case u < p.Frac01:
		x.SetZero()
		if r.Uint64()&1 == 1 {
			x.SetOne()
		}
	case u < p.Frac01+p.FracMinusOne:
		x.SetOne()
		x.Neg(x)
	case u < p.Frac01+p.FracMinusOne+p.FracTwo:
		x.SetUint64(2)
	default:
		x[0], x[1], x[2] = r.Uint64(), r.Uint64(), r.Uint64()
		x[3] = r.Uint64() >> 2 // < 2^254 < r: a valid Montgomery representation
	}
}

// SyntheticWitnessSpec describes a random witness for benchmarks.
type SyntheticWitnessSpec struct {
	Rows   int     // constraints + inputs (<= Domain)
	Domain int     // power of two
	Inputs int     // public inputs including the constant one
	Aux    int     // aux variables
	Frac01 float64 // share of aux values that are 0 or 1 (half each)
	// FracMinusOne is the share of aux values that are r − 1 (the rest,
	// 1 − Frac01 − FracMinusOne, are random).
	FracMinusOne float64
	ADensity     float64 // share of aux variables in the A density
	BDensity     float64 // share of inputs and aux variables in the B density
	// A and B draw the rows of a and b (c = a∘b); the zero profile: random.
	A, B ValueProfile
	// Codes fills the witness's value codes (groth16.Synthesized.Codes).
	Codes bool
	Seed  uint64
}

// NewSyntheticWitness draws a witness and the matching SyntheticShape: a
// and b with their profiles, c = a∘b row by row (so (a·b − c)/Z is a
// polynomial and the prover accepts it), Input[0] = 1, aux values with the
// requested shares of 0/1 and r − 1, density bits drawn with the requested
// shares, and with Codes the value codes. Generation is deterministic in
// Seed and uses all cores.
func NewSyntheticWitness(s SyntheticWitnessSpec) (*groth16.Synthesized, SyntheticShape) {
	w := &groth16.Synthesized{
		NumConstraints: s.Rows - s.Inputs,
		A:              make([]fr.Element, s.Rows),
		B:              make([]fr.Element, s.Rows),
		C:              make([]fr.Element, s.Rows),
		Input:          make([]fr.Element, s.Inputs),
		Aux:            make([]fr.Element, s.Aux),
		ADensityAux:    groth16.NewBitmap(s.Aux),
		BDensityInput:  groth16.NewBitmap(s.Inputs),
		BDensityAux:    groth16.NewBitmap(s.Aux),
	}
	random := ValueProfile{}.draw
	parallelChunks(s.Rows, s.Seed, func(r *rand.Rand, lo, hi int) {
		for i := lo; i < hi; i++ {
			s.A.draw(r, &w.A[i])
			s.B.draw(r, &w.B[i])
			w.C[i].Mul(&w.A[i], &w.B[i])
		}
	})
	aux := ValueProfile{Frac01: s.Frac01, FracMinusOne: s.FracMinusOne}
	// 64-aligned chunks so density words are written by one goroutine each.
	parallelChunks(s.Aux, s.Seed+1, func(r *rand.Rand, lo, hi int) {
		for i := lo; i < hi; i++ {
			aux.draw(r, &w.Aux[i])
			if r.Float64() < s.ADensity {
				w.ADensityAux.Set(i)
			}
			if r.Float64() < s.BDensity {
				w.BDensityAux.Set(i)
			}
		}
	})
	r := rand.New(rand.NewPCG(s.Seed, 7))
	for i := range w.Input {
		random(r, &w.Input[i])
		if r.Float64() < s.BDensity {
			w.BDensityInput.Set(i)
		}
	}
	if s.Inputs > 0 {
		w.Input[0].SetOne()
	}
	// the input rows of a, b, c (bellperson's input constraints)
	for i := 0; i < s.Inputs && s.Rows-s.Inputs+i < s.Rows; i++ {
		row := s.Rows - s.Inputs + i
		w.A[row] = w.Input[i]
		w.B[row].SetZero()
		w.C[row].SetZero()
	}
	if s.Codes {
		c := &groth16.ValueCodes{A: make([]uint8, s.Rows), B: make([]uint8, s.Rows), C: make([]uint8, s.Rows), Aux: make([]uint8, s.Aux)}
		for _, v := range []struct {
			codes []uint8
			vals  []fr.Element
		}{{c.A, w.A}, {c.B, w.B}, {c.C, w.C}, {c.Aux, w.Aux}} {
			parallelChunks(len(v.vals), 0, func(_ *rand.Rand, lo, hi int) { groth16.EncodeCodes(v.codes[lo:hi], v.vals[lo:hi]) })
		}
		w.Codes = c
	}
	sh := SyntheticShape{Domain: s.Domain, Inputs: s.Inputs, Aux: s.Aux,
		A: s.Inputs + w.ADensityAux.Count(), B: w.BDensityInput.Count() + w.BDensityAux.Count()}
	return w, sh
}

// parallelChunks runs f over [0, n) in 64-aligned chunks on all cores, each
// chunk with its own generator seeded by (seed, chunk).
func parallelChunks(n int, seed uint64, f func(r *rand.Rand, lo, hi int)) {
	const chunk = 1 << 16
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		sem <- struct{}{}
		go func(lo, hi int) {
			defer wg.Done()
			defer func() { <-sem }()
			f(rand.New(rand.NewPCG(seed, uint64(lo))), lo, hi)
		}(lo, hi)
	}
	wg.Wait()
}
