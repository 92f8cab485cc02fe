package poseidon

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// TestRoundNumbers checks the search against neptune's
// test_round_numbers_against_known_values (R_F = 8 for every width).
func TestRoundNumbers(t *testing.T) {
	known := map[int]int{ // width t → R_P
		2: 55, 3: 55, 4: 56, 5: 56, 6: 56, 7: 56, 8: 57, 9: 57, 10: 57, 11: 57,
		12: 57, 13: 57, 14: 57, 15: 57, 16: 59, 17: 59, 25: 59, 37: 60, 65: 61,
	}
	for width, rp := range known {
		rf, gotRP := roundNumbers(width)
		require.Equalf(t, 8, rf, "t=%d", width)
		require.Equalf(t, rp, gotRP, "t=%d", width)
	}
	for arity := 1; arity <= MaxArity; arity++ {
		rf, rp, err := RoundNumbers(arity)
		require.NoError(t, err)
		require.Equal(t, 8, rf)
		require.Equal(t, known[arity+1], rp)
	}
}

// TestGrainConstants checks the generator against the first, second and last
// constants of neptune's parameters/round_constants-1-1-255-9-8-57-….txt
// (output of the Poseidon reference script for t = 9, R_F = 8, R_P = 57).
func TestGrainConstants(t *testing.T) {
	rc := roundConstants(9, 8, 57)
	require.Len(t, rc, 585)
	hex := func(s string) fr.Element {
		v, ok := new(big.Int).SetString(s, 16)
		require.True(t, ok)
		var e fr.Element
		e.SetBigInt(v)
		return e
	}
	want := map[int]string{
		0:   "6ce90d12c4045fe08c3caddb776dd84ac52b4ae7e48cd49443984154f2f4c2f9",
		1:   "0ccd9b480c84022b25a75b52c8e89d80b4fa6378d32e58f3a175504940bcec39",
		2:   "513ad11016ab7bb8c7ce9ae51256040e062487edf7168d206ba1b86dfe963629",
		583: "5861985c6ad8159e1a4f056d02df583d9c79c96bae8c3b9313812b4e0b3bda60",
		584: "3b3a75eb91b0f723bcc4ab7e449e4a011b8960063efe74670c05e545519d9a8c",
	}
	for i, h := range want {
		w := hex(h)
		require.Truef(t, w.Equal(&rc[i]), "constant %d: got %s", i, rc[i].Text(16))
	}
}

func TestMDSIsSymmetricCauchy(t *testing.T) {
	for width := 2; width <= MaxArity+1; width++ {
		m := cauchyMDS(width)
		inv, err := m.inverse()
		require.NoError(t, err)
		require.True(t, m.mul(inv).isIdentity())
		for i := range width {
			for j := range width {
				require.True(t, m[i][j].Equal(&m[j][i]))
				var x fr.Element
				x.SetUint64(uint64(i + width + j))
				x.Mul(&x, &m[i][j])
				require.True(t, x.IsOne())
			}
		}
	}
}

func TestDomainTag(t *testing.T) {
	p, err := paramsFor(8)
	require.NoError(t, err)
	var want fr.Element
	want.SetUint64(0xff) // neptune hash_type.rs test_domain_tags
	require.True(t, want.Equal(&p.tag))
}

func TestOptimisedShape(t *testing.T) {
	for arity := 1; arity <= MaxArity; arity++ {
		p, err := paramsFor(arity)
		require.NoError(t, err)
		// neptune's compressed_round_constants length: R_F·t + R_P.
		n := len(p.first) + len(p.partialKey)
		for _, c := range p.post {
			n += len(c)
		}
		require.Equal(t, p.full*p.width+p.partial, n)
		require.Len(t, p.sparse, p.partial)
	}
}
