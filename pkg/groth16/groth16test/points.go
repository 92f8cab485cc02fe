package groth16test

import (
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// NotInSubgroupG1 returns a point on the curve outside G1's prime-order
// subgroup (gnark-crypto's GeneratePointNotInG1 from the seed: other seeds,
// other points), for tests of the parameter checks; it fails tb if gnark's
// own IsOnCurve / IsInSubGroup disagree.
func NotInSubgroupG1(tb testing.TB, seed uint64) curve.G1Affine {
	tb.Helper()
	var f fp.Element
	f.SetUint64(seed)
	j := curve.GeneratePointNotInG1(f)
	var p curve.G1Affine
	p.FromJacobian(&j)
	if !p.IsOnCurve() || p.IsInSubGroup() {
		tb.Fatalf("groth16test: seed %d gave no point on the curve outside G1", seed)
	}
	return p
}

// NotInSubgroupG2 is NotInSubgroupG1 for G2.
func NotInSubgroupG2(tb testing.TB, seed uint64) curve.G2Affine {
	tb.Helper()
	var f curve.E2
	f.A0.SetUint64(seed)
	f.A1.SetUint64(seed + 1)
	j := curve.GeneratePointNotInG2(f)
	var p curve.G2Affine
	p.FromJacobian(&j)
	if !p.IsOnCurve() || p.IsInSubGroup() {
		tb.Fatalf("groth16test: seed %d gave no point on the curve outside G2", seed)
	}
	return p
}
