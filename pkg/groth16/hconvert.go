package groth16

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/bits"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// G1DFT transforms points in place: out_i = Σ_j ω^{ij}·s_j·in_j, or
// Σ_j ω^{−ij}·s_j·in_j when inverse (no 1/n factor), ω the primitive
// len(points)-th root of unity of gnark-crypto's fft domain and s_j =
// scale.C·scale.X^j (1 when scale is nil); len(points) is a power of two.
type G1DFT func(ctx context.Context, points []curve.G1Affine, inverse bool, scale *DFTScale) error

// DFTScale scales a transform's input: point j is multiplied by C·X^j
// before the transform (one scalar multiplication per point, done where
// the transform runs).
type DFTScale struct{ C, X fr.Element }

var _ G1DFT = CPUDFTG1

// CPUDFTG1 is the G1DFT on the CPU: a radix-2 transform in Jacobian
// coordinates on all cores, one scalar multiplication per butterfly
// (n/2·log n of them) and one per point for a scale, checking ctx between
// chunks. It suits test shapes and small domains; a 2^27-point transform
// takes hours on the CPU.
func CPUDFTG1(ctx context.Context, points []curve.G1Affine, inverse bool, scale *DFTScale) (err error) {
	n := len(points)
	if n == 0 || n&(n-1) != 0 {
		return fmt.Errorf("groth16: dft: %d points, want a power of two", n)
	}
	if n == 1 && scale == nil {
		return ctx.Err()
	}
	var omega fr.Element
	if n == 1 {
		omega.SetOne()
	} else if omega, err = fft.Generator(uint64(n)); err != nil {
		return fmt.Errorf("groth16: dft: %w", err)
	}
	if inverse {
		omega.Inverse(&omega)
	}
	nw := workers(0)
	const chunk = 1 << 10
	// Twiddles ω^k for k < n/2.
	half := n / 2
	tw := make([]fr.Element, half)
	if err := parallelRange(ctx, half, chunk, nw, func(s, e int) error {
		var w fr.Element
		w.Exp(omega, big.NewInt(int64(s)))
		for k := s; k < e; k++ {
			tw[k] = w
			w.Mul(&w, &omega)
		}
		return nil
	}); err != nil {
		return err
	}
	// Decimation in time: the input (scaled) in bit-reversed order, then
	// log n passes of butterflies.
	buf := make([]curve.G1Jac, n)
	shift := 64 - uint(bits.TrailingZeros(uint(n)))
	if err := parallelRange(ctx, n, chunk, nw, func(s, e int) error {
		var f fr.Element // scale.C·scale.X^i
		var k big.Int
		if scale != nil {
			f.Exp(scale.X, big.NewInt(int64(s))).Mul(&f, &scale.C)
		}
		for i := s; i < e; i++ {
			p := &buf[bits.Reverse64(uint64(i))>>shift]
			p.FromAffine(&points[i])
			if scale != nil {
				f.BigInt(&k)
				p.ScalarMultiplication(p, &k)
				f.Mul(&f, &scale.X)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for size := 2; size <= n; size <<= 1 {
		h, step := size/2, n/size
		err := parallelRange(ctx, half, chunk/4, nw, func(s, e int) error {
			var t curve.G1Jac
			var k big.Int
			for b := s; b < e; b++ {
				j := b % h
				lo := (b/h)*size + j
				hi := lo + h
				t.Set(&buf[hi])
				if j != 0 {
					tw[j*step].BigInt(&k)
					t.ScalarMultiplication(&t, &k)
				}
				buf[hi].Set(&buf[lo]).SubAssign(&t)
				buf[lo].AddAssign(&t)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return jacobianToAffine(ctx, buf, points, nw)
}

// jacobianToAffine writes src's points into dst in affine form, in
// parallel batches of one inversion each.
func jacobianToAffine(ctx context.Context, src []curve.G1Jac, dst []curve.G1Affine, nw int) error {
	return parallelRange(ctx, len(src), 1<<12, nw, func(s, e int) error {
		copy(dst[s:e], curve.BatchJacobianToAffineG1(src[s:e]))
		return nil
	})
}

// ConvertHCosetLagrange turns a monomial proving key (HMonomial: a
// ceremony's H query τ^j·Z(τ)/δ, j ≤ n − 2) into HCosetLagrange form
// from public data only: the key's H and L and the C matrix of its
// circuit sys (the circuit the key was made for; its other matrices are
// not read). The result proves the same proofs as pk (byte for byte, for
// the same randomness) under the same verifying key.
//
// With s = 1/(n·(gⁿ − 1)), g the coset shift (gnark-crypto's
// FrMultiplicativeGen, 7) and ω the domain's generator:
//
//	H'_i = s·Σ_{j≤n−2} g^{−j}·ω^{−ij}·H_j        (an inverse DFT)
//	M_r  = s·Σ_{j≤n−2} ω^{−rj}·H_j              (an inverse DFT)
//	L'_k = L_k − Σ_r C[r][k]·M_r,  LInput_k = −Σ_r C[r][k]·M_r
//
// H'_i is ℓ_i(τ)·κ/δ and M_r is L_r(τ)·κ/δ without their X^{n−1} terms,
// which the ceremony points cannot give (τ^{n−1}·Z(τ)/δ is not in the
// key). The dropped terms cancel: for a satisfied assignment the top
// coefficient of the coset interpolant (gⁿ − 1)·h + C is C's (deg h ≤ n − 2),
// so what H' leaves out of κ·C(τ)/δ, L' and LInput leave out as well.
//
// dft runs the two transforms (nil: CPUDFTG1; the CUDA library's is
// cuda.Backend.DFTG1). The C terms are folded by foldC: coefficients
// other than ±1 multiplied by constraint (±2^k from one doubling chain per
// row), then additions by variable. Progress is reported under
// "convert h: dft", "convert h: c matrix" and "convert h: fold".
//
// pk's A, B_G1, B_G2 and verifying key are shared with the result, not
// copied; pk's H and L are not modified. A key not in monomial form, or
// whose ic, h or l counts do not fit sys (inputs, domain − 1, aux), is
// refused with ErrShape naming the section and both counts; a term of
// sys outside its counts is an error naming the constraint.
func ConvertHCosetLagrange(ctx context.Context, pk *ProvingKey, sys R1CS, dft G1DFT, progress Progress) (*ProvingKey, error) {
	return convertH(ctx, pk, sys, dft, progress, false)
}

// ConvertHCosetLagrangeInPlace is ConvertHCosetLagrange for a key that is
// not used afterwards: the result takes over pk's H and L arrays (one
// transform runs in H's array when its capacity holds the domain, as
// ReadParams and ParamsFile.G1Section give it; the new L is written over
// L), so the conversion holds two of its five large arrays fewer (about
// 25 GB at 32 GiB: docs/parameters.md). pk must not be used after the
// call, whether it succeeds or not.
func ConvertHCosetLagrangeInPlace(ctx context.Context, pk *ProvingKey, sys R1CS, dft G1DFT, progress Progress) (*ProvingKey, error) {
	return convertH(ctx, pk, sys, dft, progress, true)
}

func convertH(ctx context.Context, pk *ProvingKey, sys R1CS, dft G1DFT, progress Progress, inPlace bool) (*ProvingKey, error) {
	if pk == nil || sys == nil {
		return nil, fmt.Errorf("groth16: convert h: %w: nil proving key or constraint system", ErrShape)
	}
	if pk.HForm != HMonomial {
		return nil, fmt.Errorf("groth16: convert h: %w: the key's H query is in %v form, want monomial", ErrShape, pk.HForm)
	}
	if len(pk.LInput) != 0 {
		return nil, fmt.Errorf("groth16: convert h: %w: a monomial key has no l_input, this one has %d points", ErrShape, len(pk.LInput))
	}
	m, nIn, nAux := sys.NumConstraints(), sys.NumInputs(), sys.NumAux()
	if m < 0 || nIn < 1 || nAux < 0 {
		return nil, fmt.Errorf("groth16: convert h: system of %d constraints, %d inputs and %d aux variables (ONE is input 0)", m, nIn, nAux)
	}
	n := domainSize(m + nIn)
	for _, x := range []struct {
		what      string
		got, want int
		rule      string
	}{
		{SectionIC, len(pk.VK.IC), nIn, "one per input"},
		{SectionH, len(pk.H), n - 1, fmt.Sprintf("domain − 1: domain %d", n)},
		{SectionL, len(pk.L), nAux, "one per aux variable"},
	} {
		if x.got != x.want {
			return nil, fmt.Errorf("groth16: convert h: %w: section %s has %d points, the circuit needs %d (%s)", ErrShape, x.what, x.got, x.want, x.rule)
		}
	}
	if dft == nil {
		dft = CPUDFTG1
	}
	nw := workers(0)

	// s = 1/(n·(gⁿ − 1)); the DFT inputs s·g^{−j}·H_j and s·H_j, scaled
	// where the transforms run.
	g, gn := cosetShift(uint64(n))
	var sc, one, gInv fr.Element
	one.SetOne()
	sc.Sub(&gn, &one).Mul(&sc, new(fr.Element).SetUint64(uint64(n))).Inverse(&sc)
	gInv.Inverse(&g)
	hNew := make([]curve.G1Affine, n)
	copy(hNew, pk.H)
	var mr []curve.G1Affine
	if inPlace && cap(pk.H) >= n {
		mr = pk.H[:n]
		mr[n-1] = curve.G1Affine{}
	} else {
		mr = make([]curve.G1Affine, n)
		copy(mr, pk.H)
	}
	// hNew[n−1], mr[n−1] are the identity: the X^{n−1} terms dropped.
	pr := newProgressReporter(progress, "convert h: dft", 2)
	for _, x := range []struct {
		v     []curve.G1Affine
		scale DFTScale
	}{{hNew, DFTScale{C: sc, X: gInv}}, {mr, DFTScale{C: sc, X: one}}} {
		if err := dft(ctx, x.v, true, &x.scale); err != nil {
			return nil, fmt.Errorf("groth16: convert h: dft of %d points: %w", n, err)
		}
		pr.add(1)
	}

	cols, err := readColumns(ctx, sys, MatrixC, progress, "convert h: c matrix")
	if err != nil {
		return nil, fmt.Errorf("groth16: convert h: %w", err)
	}
	var lOut []curve.G1Affine // nil: a new array
	if inPlace {
		lOut = pk.L
	}
	lInput, l, err := foldC(ctx, cols, mr, pk.L, lOut, m, nIn, nw, progress)
	if err != nil {
		return nil, fmt.Errorf("groth16: convert h: %w", err)
	}
	return &ProvingKey{VK: pk.VK, HForm: HCosetLagrange, H: hNew, A: pk.A, BG1: pk.BG1, BG2: pk.BG2,
		L: l, LInput: lInput}, nil
}

// A column code holds a small coefficient c itself (|c| < 2^30, so ±1 and
// 0 too); codes ≤ codeLarge index the large coefficients:
// code = math.MinInt32 + index.
const (
	smallBound = 1 << 30
	codeLarge  = -smallBound
)

// columns is one matrix of an R1CS by variable (inputs, then aux): the
// terms of variable v are rows[start[v]:start[v+1]] with codes alike.
type columns struct {
	start []int
	rows  []uint32
	codes []int32
	large []fr.Element
}

// readColumns reads matrix mat of sys into columns with two passes of
// Terms: the counts, then the terms.
func readColumns(ctx context.Context, sys R1CS, mat int, progress Progress, stage string) (*columns, error) {
	m, nIn, nAux := sys.NumConstraints(), sys.NumInputs(), sys.NumAux()
	if m > math.MaxUint32 {
		return nil, fmt.Errorf("%d constraints: at most 2^32", m)
	}
	index := func(row int, v r1cs.Variable) (int, error) {
		if uint(row) >= uint(m) {
			return 0, fmt.Errorf("matrix %c: term of constraint %d, the system has %d", "ABC"[mat], row, m)
		}
		i := v.Index()
		if v.IsInput() {
			if i >= nIn {
				return 0, fmt.Errorf("matrix %c: constraint %d: term of input %d, the system has %d inputs", "ABC"[mat], row, i, nIn)
			}
			return i, nil
		}
		if i >= nAux {
			return 0, fmt.Errorf("matrix %c: constraint %d: term of aux %d, the system has %d aux variables", "ABC"[mat], row, i, nAux)
		}
		return nIn + i, nil
	}
	pr := newProgressReporter(progress, stage, 2*int64(m))
	pass := func(f func(row, v int, c *fr.Element)) error {
		last := -1
		err := sys.Terms(mat, func(row int, v r1cs.Variable, c *fr.Element) error {
			if row>>16 != last>>16 {
				pr.add(int64(row - max(last, 0)))
				last = row
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			i, err := index(row, v)
			if err != nil {
				return err
			}
			f(row, i, c)
			return nil
		})
		if err == nil {
			err = ctx.Err()
		}
		pr.add(int64(m - max(last, 0)))
		return err
	}
	cols := &columns{start: make([]int, nIn+nAux+1)}
	if err := pass(func(_, v int, _ *fr.Element) { cols.start[v+1]++ }); err != nil {
		return nil, err
	}
	for v := range nIn + nAux {
		cols.start[v+1] += cols.start[v]
	}
	total := cols.start[nIn+nAux]
	cols.rows = make([]uint32, total)
	cols.codes = make([]int32, total)
	next := make([]int, nIn+nAux)
	copy(next, cols.start)
	largeIdx := map[fr.Element]int32{}
	var neg fr.Element
	extra := -1
	err := pass(func(row, v int, c *fr.Element) {
		x := next[v]
		if x >= cols.start[v+1] { // the second pass gave more terms than the first
			extra = v
			return
		}
		next[v]++
		cols.rows[x] = uint32(row)
		code, ok := smallCode(c, &neg)
		if !ok {
			idx, seen := largeIdx[*c]
			if !seen {
				idx = int32(len(cols.large))
				largeIdx[*c] = idx
				cols.large = append(cols.large, *c)
			}
			code = math.MinInt32 + idx
		}
		cols.codes[x] = code
	})
	if err != nil {
		return nil, err
	}
	for v := range next {
		if v == extra || next[v] != cols.start[v+1] {
			return nil, fmt.Errorf("matrix %c: the system streamed different terms on two passes (variable %d)", "ABC"[mat], v)
		}
	}
	if len(cols.large) > math.MaxInt32-smallBound {
		return nil, fmt.Errorf("matrix %c: %d distinct large coefficients", "ABC"[mat], len(cols.large))
	}
	return cols, nil
}

// smallCode is c as a small code (|c| < 2^30) when it is one.
func smallCode(c, neg *fr.Element) (int32, bool) {
	if c.IsUint64() {
		if u := c.Uint64(); u < smallBound {
			return int32(u), true
		}
		return 0, false
	}
	neg.Neg(c)
	if neg.IsUint64() {
		if u := neg.Uint64(); u < smallBound {
			return -int32(u), true
		}
	}
	return 0, false
}
