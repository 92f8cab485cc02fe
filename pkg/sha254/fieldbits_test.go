package sha254

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/math/bits"
	"github.com/stretchr/testify/require"
)

type toBitsMode int

const (
	strict toBitsMode = iota
	relaxed
	domain
)

// toBitsCircuit decomposes V and checks the bits against Bits (the SHA-order
// bits of V's little-endian encoding, computed natively) and the packing back
// to V.
type toBitsCircuit struct {
	mode toBitsMode
	V    frontend.Variable
	Bits []frontend.Variable `gnark:",public"`
}

func (c *toBitsCircuit) Define(api frontend.API) error {
	var out []frontend.Variable
	switch c.mode {
	case strict:
		out = FieldToBits(api, c.V)
	case relaxed:
		out = FieldToBitsRelaxed(api, c.V)
	case domain:
		out = DomainToBits(api, c.V)
	}
	for i := range out {
		api.AssertIsEqual(out[i], c.Bits[i])
	}
	// Packing back (all 256 bits, little-endian bytes) gives V.
	terms := make([]frontend.Variable, 0, 256)
	for k, b := range out {
		terms = append(terms, api.Mul(b, pow2(8*(k/8)+7-k%8)))
	}
	api.AssertIsEqual(sum(api, terms), c.V)
	return nil
}

func toBitsAssignment(v *big.Int, bitsOf *big.Int) *toBitsCircuit {
	var le [32]byte
	bitsOf.FillBytes(le[:])
	le = [32]byte(reverse(le[:]))
	return &toBitsCircuit{V: v, Bits: bytesToBits(le[:])}
}

func edgeValues(rng *rand.Rand) []*big.Int {
	r := fr.Modulus()
	vals := []*big.Int{
		big.NewInt(0), big.NewInt(1), big.NewInt(5),
		new(big.Int).Sub(r, big.NewInt(1)),         // largest element
		new(big.Int).Lsh(big.NewInt(1), 254),       // 2^254 < r
		new(big.Int).Sub(pow2(254), big.NewInt(1)), // largest 254-bit value
	}
	for range 4 {
		var e fr.Element
		e.SetBigInt(new(big.Int).SetBytes(randomBytes(rng, 32)))
		vals = append(vals, e.BigInt(new(big.Int)))
	}
	return vals
}

func TestFieldToBitsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, mode := range []toBitsMode{strict, relaxed, domain} {
		ccs := compile(t, &toBitsCircuit{mode: mode, Bits: make([]frontend.Variable, 256)})
		for _, v := range edgeValues(rng) {
			err := solve(t, ccs, toBitsAssignment(v, v))
			if mode == domain && v.BitLen() > 254 {
				require.Errorf(t, err, "DomainToBits accepted %s ≥ 2^254", v.Text(16))
				continue
			}
			require.NoErrorf(t, err, "mode %d, v = %s", mode, v.Text(16))
		}
	}
}

// TestFieldToBitsRejectsNonCanonical replaces the decomposition hint with one
// that returns the bits of v + r (a valid 255-bit encoding of the same field
// element when v + r < 2^255): the relaxed decomposition accepts it, the
// strict one must not.
func TestFieldToBitsRejectsNonCanonical(t *testing.T) {
	r := fr.Modulus()
	v := big.NewInt(5)
	alias := new(big.Int).Add(v, r)
	require.Less(t, alias.BitLen(), 256)

	nBits := bits.GetHints()[1]
	require.Contains(t, solver.GetHintName(nBits), "nBits")
	aliasHint := func(_ *big.Int, in []*big.Int, out []*big.Int) error {
		x := new(big.Int).Add(in[0], r)
		for i := range out {
			out[i].SetUint64(uint64(x.Bit(i)))
		}
		return nil
	}
	override := solver.OverrideHint(solver.GetHintID(nBits), aliasHint)

	for _, mode := range []toBitsMode{relaxed, strict} {
		ccs := compile(t, &toBitsCircuit{mode: mode, Bits: make([]frontend.Variable, 256)})
		// Bits holds the aliased encoding; the repacking check still passes
		// (v + r ≡ v), so only the decomposition itself can reject it.
		w := toBitsAssignment(v, alias)
		wit, err := frontend.NewWitness(w, fieldOf())
		require.NoError(t, err)
		err = ccs.IsSolved(wit, override)
		if mode == relaxed {
			require.NoError(t, err, "relaxed decomposition should admit v + r")
		} else {
			require.Error(t, err, "strict decomposition admitted v + r")
		}
	}
}

// TestFieldToBitsConstraintCounts pins the cost of the decompositions.
func TestFieldToBitsConstraintCounts(t *testing.T) {
	for _, c := range []struct {
		mode toBitsMode
		name string
		want int
	}{
		{relaxed, "FieldToBitsRelaxed", 256},
		{domain, "DomainToBits", 255},
		{strict, "FieldToBits", 0},
	} {
		ccs := compile(t, &bitsOnly{mode: c.mode})
		n := ccs.GetNbConstraints()
		t.Logf("%-20s %d constraints", c.name, n)
		if c.want != 0 {
			require.Equal(t, c.want, n, c.name)
		} else {
			require.Greater(t, n, 256, "strict check must cost more than the relaxed one")
			require.Less(t, n, 520)
		}
	}
}

type bitsOnly struct {
	mode toBitsMode
	V    frontend.Variable
}

func (c *bitsOnly) Define(api frontend.API) error {
	switch c.mode {
	case strict:
		FieldToBits(api, c.V)
	case relaxed:
		FieldToBitsRelaxed(api, c.V)
	case domain:
		DomainToBits(api, c.V)
	}
	return nil
}

// hash2Circuit is rust-fil-proofs' Sha256Function::hash2_circuit (a tree-D
// node): SHA-254 over the 32-byte little-endian encodings of two elements.
type hash2Circuit struct {
	A, B frontend.Variable
	Want frontend.Variable `gnark:",public"`
}

func (c *hash2Circuit) Define(api frontend.API) error {
	msg := append(FieldToBits(api, c.A), FieldToBits(api, c.B)...)
	api.AssertIsEqual(DigestToField(api, Circuit(api, msg)), c.Want)
	return nil
}

func TestHash2MatchesNative(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ccs := compile(t, &hash2Circuit{})
	require.Zero(t, commitments(ccs))
	t.Logf("hash2 of two field elements: %d constraints", ccs.GetNbConstraints())
	for range 3 {
		var a, b fr.Element
		a.SetBigInt(new(big.Int).SetBytes(randomBytes(rng, 32)))
		b.SetBigInt(new(big.Int).SetBytes(randomBytes(rng, 32)))
		la, lb := FromElement(&a), FromElement(&b)
		want := SumElement(append(la[:], lb[:]...))
		require.NoError(t, solve(t, ccs, &hash2Circuit{A: a.String(), B: b.String(), Want: want.String()}))

		var wrong fr.Element
		wrong.SetOne()
		wrong.Add(&wrong, &want)
		require.Error(t, solve(t, ccs, &hash2Circuit{A: a.String(), B: b.String(), Want: wrong.String()}))
	}
}

// truncCircuit checks TruncateBits against the native SHA-254 digest bits and
// against DomainToBits of the digest's field element.
type truncCircuit struct {
	Msg  []frontend.Variable
	Want []frontend.Variable `gnark:",public"`
}

func (c *truncCircuit) Define(api frontend.API) error {
	d := Circuit(api, c.Msg)
	tb := TruncateBits(d)
	viaElem := DomainToBits(api, DigestToField(api, d))
	for i := range tb {
		api.AssertIsEqual(tb[i], c.Want[i])
		api.AssertIsEqual(viaElem[i], c.Want[i])
	}
	return nil
}

func TestTruncateBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	ccs := compile(t, &truncCircuit{Msg: make([]frontend.Variable, 8*32), Want: make([]frontend.Variable, 256)})
	rejected := 0
	for range 4 {
		msg := randomBytes(rng, 32)
		d := Sum(msg)
		require.NoError(t, solve(t, ccs, &truncCircuit{Msg: bytesToBits(msg), Want: bytesToBits(d[:])}))
		full := sha256Sum(msg)
		if full[31]&0xc0 != 0 { // the untruncated digest must not pass
			require.Error(t, solve(t, ccs, &truncCircuit{Msg: bytesToBits(msg), Want: bytesToBits(full[:])}))
			rejected++
		}
	}
	require.Positive(t, rejected, "no message exercised the truncated bits")
}
