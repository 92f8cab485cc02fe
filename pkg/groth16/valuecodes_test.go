package groth16

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// TestCodeOf: 0, 1 and r − 1 (from fr's own arithmetic) get their codes;
// random values, values one limb away from them, and unreduced limbs are
// CodeOther.
func TestCodeOf(t *testing.T) {
	var zero, one, minusOne, two fr.Element
	one.SetOne()
	minusOne.Neg(&one)
	two.SetUint64(2)
	require.Equal(t, CodeZero, CodeOf(&zero))
	require.Equal(t, CodeOne, CodeOf(&one))
	require.Equal(t, CodeMinusOne, CodeOf(&minusOne))
	require.Equal(t, CodeTwo, CodeOf(&two))
	var three fr.Element
	three.SetUint64(3)
	require.Equal(t, CodeOther, CodeOf(&three))
	r := rand.New(rand.NewPCG(1, 2))
	for _, v := range []fr.Element{zero, one, minusOne, two} {
		for limb := range 4 {
			w := v
			w[limb] ^= 1 << (r.Uint64() % 64)
			require.Equal(t, CodeOther, CodeOf(&w), "%v with one bit of limb %d flipped", v, limb)
		}
	}
	for range 1000 {
		var x fr.Element
		x.SetRandom()
		want := CodeOther
		switch {
		case x.IsZero():
			want = CodeZero
		case x.IsOne():
			want = CodeOne
		case x.Equal(&minusOne):
			want = CodeMinusOne
		case x.Equal(&two):
			want = CodeTwo
		}
		require.Equal(t, want, CodeOf(&x))
	}
	unreduced := fr.Element{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	require.Equal(t, CodeOther, CodeOf(&unreduced))

	v := []fr.Element{one, zero, two, minusOne, three}
	codes := make([]uint8, len(v))
	EncodeCodes(codes, v)
	require.Equal(t, []uint8{CodeOne, CodeZero, CodeTwo, CodeMinusOne, CodeOther}, codes)
}

// TestCheckCodes: a Synthesized without codes passes; with codes, a wrong
// code or a missing one is an ErrShape naming the vector and index.
func TestCheckCodes(t *testing.T) {
	var one fr.Element
	one.SetOne()
	s := &Synthesized{A: []fr.Element{one, {}}, B: []fr.Element{{}, {}}, C: []fr.Element{{}, {}}, Aux: []fr.Element{one}}
	require.NoError(t, s.CheckCodes())
	s.Codes = &ValueCodes{A: []uint8{CodeOne, CodeZero}, B: []uint8{0, 0}, C: []uint8{0, 0}, Aux: []uint8{CodeOne}}
	require.NoError(t, s.CheckCodes())
	s.Codes.A[1] = CodeOther
	require.ErrorIs(t, s.CheckCodes(), ErrShape)
	require.ErrorContains(t, s.CheckCodes(), "a[1] is coded 3, its value's code is 0")
	s.Codes.A[1] = CodeZero
	s.Codes.Aux = nil
	require.ErrorContains(t, s.CheckCodes(), "0 aux codes for 1 values")
}
