package groth16

import (
	"context"
	"fmt"
	"math"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Fixed-base scalar multiplication for setup: many scalars times one base
// (the generator). gnark-crypto's BatchScalarMultiplication doubles ~255
// times per scalar; here every window has its own precomputed table
// T[w][j] = (j+1)·2^(c·w)·G, so a scalar costs one mixed addition per
// non-zero signed c-bit digit and no doubling (a comb without doublings,
// trading table memory for time).

// FixedBase evaluates fixed-base scalar multiplications from a comb table
// that Setup builds: table[w·2^(c−1) + j] = (j+1)·2^(c·w)·G for w < windows,
// j < 2^(c−1) (signed c-bit digits, as signedDigits writes them). Each call
// sets out[i] = scalars[i]·G, infinity as (0, 0). The CUDA backend
// implements it (pkg/groth16/cuda); Setup uses the CPU without one.
type FixedBase interface {
	MulG1(table []curve.G1Affine, c, windows int, scalars []fr.Element, out []curve.G1Affine) error
	MulG2(table []curve.G2Affine, c, windows int, scalars []fr.Element, out []curve.G2Affine) error
}

// fixedBaseChunk is the number of scalars per FixedBase call: progress
// advances and cancellation is seen between calls.
const fixedBaseChunk = 1 << 23

func fixedBaseChunks(ctx context.Context, n int, pr *progressReporter, f func(start, end int) error) error {
	for s := 0; s < n; s += fixedBaseChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := min(n, s+fixedBaseChunk)
		if err := f(s, e); err != nil {
			return err
		}
		pr.add(int64(e - s))
	}
	return nil
}

// fixedBaseWindow picks the window width minimizing additions for n scalars:
// per scalar one addition per window, plus the table.
func fixedBaseWindow(n int) int {
	best, bestCost := 4, math.MaxFloat64
	for c := 4; c <= 16; c++ {
		k := float64(fixedBaseWindows(c))
		cost := k*float64(n) + k*float64(int(1)<<(c-1))
		if cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// fixedBaseWindows is the number of signed c-bit windows of a 255-bit
// scalar, one more than needed for the bits to absorb the last carry.
func fixedBaseWindows(c int) int { return (fr.Bits+c-1)/c + 1 }

// signedDigits writes the signed base-2^c digits of s (each in
// [−2^(c−1), 2^(c−1)]) to out, least significant first.
func signedDigits(s *fr.Element, c int, out []int32) {
	limbs := s.Bits() // regular form, little-endian
	mask := uint64(1)<<c - 1
	half := uint64(1) << (c - 1)
	carry := uint64(0)
	for w := range out {
		bit := w * c
		var v uint64
		if bit < 256 {
			li, off := bit/64, bit%64
			v = limbs[li] >> off
			if off+c > 64 && li+1 < 4 {
				v |= limbs[li+1] << (64 - off)
			}
			v &= mask
		}
		v += carry
		if v > half {
			out[w] = int32(int64(v) - int64(1)<<c)
			carry = 1
		} else {
			out[w] = int32(v)
			carry = 0
		}
	}
}

type g1FixedBase struct {
	c, k  int
	table []curve.G1Affine // k rows of 2^(c−1)
}

func newG1FixedBase(ctx context.Context, base *curve.G1Affine, n, nw int) (*g1FixedBase, error) {
	return newG1FixedBaseWindow(ctx, base, fixedBaseWindow(n), nw)
}

// FixedBaseTableG1 builds the comb table of FixedBase for base with c-bit
// windows (2 <= c <= 24) and returns it with its number of windows: what
// Setup hands a FixedBase, for testing and timing one.
func FixedBaseTableG1(ctx context.Context, base *curve.G1Affine, c int) ([]curve.G1Affine, int, error) {
	if err := checkTableWindow(c); err != nil {
		return nil, 0, err
	}
	fb, err := newG1FixedBaseWindow(ctx, base, c, workers(0))
	if err != nil {
		return nil, 0, err
	}
	return fb.table, fb.k, nil
}

// checkTableWindow bounds the window of the exported table builders.
func checkTableWindow(c int) error {
	if c < 2 || c > 24 {
		return fmt.Errorf("groth16: fixed-base window of %d bits (2 to 24)", c)
	}
	return nil
}

func newG1FixedBaseWindow(ctx context.Context, base *curve.G1Affine, c, nw int) (*g1FixedBase, error) {
	k := fixedBaseWindows(c)
	row := 1 << (c - 1)
	fb := &g1FixedBase{c: c, k: k, table: make([]curve.G1Affine, k*row)}
	// Row bases 2^(c·w)·G.
	bases := make([]curve.G1Jac, k)
	bases[0].FromAffine(base)
	for w := 1; w < k; w++ {
		bases[w] = bases[w-1]
		for i := 0; i < c; i++ {
			bases[w].DoubleAssign()
		}
	}
	err := parallelRange(ctx, k, 1, nw, func(s, e int) error {
		jac := make([]curve.G1Jac, row)
		for w := s; w < e; w++ {
			var b curve.G1Affine
			b.FromJacobian(&bases[w])
			jac[0] = bases[w]
			for j := 1; j < row; j++ {
				jac[j] = jac[j-1]
				jac[j].AddMixed(&b)
			}
			batchToAffineG1(jac, fb.table[w*row:(w+1)*row])
		}
		return nil
	})
	return fb, err
}

// mul sets out[i] = scalars[i]·G.
func (fb *g1FixedBase) mul(ctx context.Context, scalars []fr.Element, out []curve.G1Affine, nw int, pr *progressReporter) error {
	const chunk = 1 << 10
	row := 1 << (fb.c - 1)
	return parallelRange(ctx, len(scalars), chunk, nw, func(s, e int) error {
		digits := make([]int32, fb.k)
		jac := make([]curve.G1Jac, e-s)
		for i := s; i < e; i++ {
			signedDigits(&scalars[i], fb.c, digits)
			p := &jac[i-s]
			p.X.SetOne()
			p.Y.SetOne()
			p.Z.SetZero()
			for w, d := range digits {
				switch {
				case d > 0:
					p.AddMixed(&fb.table[w*row+int(d)-1])
				case d < 0:
					var q curve.G1Affine
					q.Neg(&fb.table[w*row+int(-d)-1])
					p.AddMixed(&q)
				}
			}
		}
		batchToAffineG1(jac, out[s:e])
		pr.add(int64(e - s))
		return nil
	})
}

// batchToAffineG1 converts with one field inversion (Montgomery's trick).
func batchToAffineG1(jac []curve.G1Jac, out []curve.G1Affine) {
	acc := jac[0].Z
	acc.SetOne()
	for i := range jac {
		if jac[i].Z.IsZero() {
			continue
		}
		out[i].X = acc // prefix product, before i
		acc.Mul(&acc, &jac[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(jac) - 1; i >= 0; i-- {
		if jac[i].Z.IsZero() {
			out[i].X.SetZero()
			out[i].Y.SetZero()
			continue
		}
		zInv := out[i].X
		zInv.Mul(&zInv, &acc) // 1/Z_i
		acc.Mul(&acc, &jac[i].Z)
		var z2 = zInv
		z2.Square(&zInv)
		out[i].X.Mul(&jac[i].X, &z2)
		z2.Mul(&z2, &zInv)
		out[i].Y.Mul(&jac[i].Y, &z2)
	}
}

type g2FixedBase struct {
	c, k  int
	table []curve.G2Affine
}

func newG2FixedBase(ctx context.Context, base *curve.G2Affine, n, nw int) (*g2FixedBase, error) {
	return newG2FixedBaseWindow(ctx, base, fixedBaseWindow(n), nw)
}

// FixedBaseTableG2 is FixedBaseTableG1 in G2.
func FixedBaseTableG2(ctx context.Context, base *curve.G2Affine, c int) ([]curve.G2Affine, int, error) {
	if err := checkTableWindow(c); err != nil {
		return nil, 0, err
	}
	fb, err := newG2FixedBaseWindow(ctx, base, c, workers(0))
	if err != nil {
		return nil, 0, err
	}
	return fb.table, fb.k, nil
}

func newG2FixedBaseWindow(ctx context.Context, base *curve.G2Affine, c, nw int) (*g2FixedBase, error) {
	k := fixedBaseWindows(c)
	row := 1 << (c - 1)
	fb := &g2FixedBase{c: c, k: k, table: make([]curve.G2Affine, k*row)}
	bases := make([]curve.G2Jac, k)
	bases[0].FromAffine(base)
	for w := 1; w < k; w++ {
		bases[w] = bases[w-1]
		for i := 0; i < c; i++ {
			bases[w].DoubleAssign()
		}
	}
	err := parallelRange(ctx, k, 1, nw, func(s, e int) error {
		jac := make([]curve.G2Jac, row)
		for w := s; w < e; w++ {
			var b curve.G2Affine
			b.FromJacobian(&bases[w])
			jac[0] = bases[w]
			for j := 1; j < row; j++ {
				jac[j] = jac[j-1]
				jac[j].AddMixed(&b)
			}
			batchToAffineG2(jac, fb.table[w*row:(w+1)*row])
		}
		return nil
	})
	return fb, err
}

func (fb *g2FixedBase) mul(ctx context.Context, scalars []fr.Element, out []curve.G2Affine, nw int, pr *progressReporter) error {
	const chunk = 1 << 9
	row := 1 << (fb.c - 1)
	return parallelRange(ctx, len(scalars), chunk, nw, func(s, e int) error {
		digits := make([]int32, fb.k)
		jac := make([]curve.G2Jac, e-s)
		for i := s; i < e; i++ {
			signedDigits(&scalars[i], fb.c, digits)
			p := &jac[i-s]
			p.X.SetOne()
			p.Y.SetOne()
			p.Z.SetZero()
			for w, d := range digits {
				switch {
				case d > 0:
					p.AddMixed(&fb.table[w*row+int(d)-1])
				case d < 0:
					var q curve.G2Affine
					q.Neg(&fb.table[w*row+int(-d)-1])
					p.AddMixed(&q)
				}
			}
		}
		batchToAffineG2(jac, out[s:e])
		pr.add(int64(e - s))
		return nil
	})
}

func batchToAffineG2(jac []curve.G2Jac, out []curve.G2Affine) {
	acc := jac[0].Z
	acc.SetOne()
	for i := range jac {
		if jac[i].Z.IsZero() {
			continue
		}
		out[i].X = acc
		acc.Mul(&acc, &jac[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(jac) - 1; i >= 0; i-- {
		if jac[i].Z.IsZero() {
			out[i].X.SetZero()
			out[i].Y.SetZero()
			continue
		}
		zInv := out[i].X
		zInv.Mul(&zInv, &acc)
		acc.Mul(&acc, &jac[i].Z)
		z2 := zInv
		z2.Square(&zInv)
		out[i].X.Mul(&jac[i].X, &z2)
		z2.Mul(&z2, &zInv)
		out[i].Y.Mul(&jac[i].Y, &z2)
	}
}
