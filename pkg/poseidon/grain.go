package poseidon

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Round constants from the Grain LFSR in self-shrinking mode, as the Poseidon
// reference script create_rcs_grain.sage generates them and neptune
// (src/round_constants.rs, called from src/lib.rs with FIELD = 1, SBOX = 1 and
// the field's NUM_BITS = 255) reproduces:
//
//  1. the 80-bit state is: field (2 bits), S-box (4), field size (12),
//     t (12), R_F (10), R_P (10), each most significant bit first, then 30
//     ones;
//  2. b[i+80] = b[i+62] ⊕ b[i+51] ⊕ b[i+38] ⊕ b[i+23] ⊕ b[i+13] ⊕ b[i];
//  3. the first 160 bits are discarded;
//  4. bits are taken in pairs: when the first is 1 the second is output,
//     otherwise both are dropped;
//  5. each candidate is the next 255 output bits read as a big-endian
//     integer; candidates ≥ r are rejected.
const (
	grainField     = 1   // GF(p)
	grainSBox      = 1   // neptune's code for x^5
	grainFieldBits = 255 // fr.Bits
)

type grain struct {
	state [80]bool
	pos   int // index of b[i] (the oldest bit) in the ring
}

func newGrain(t, rf, rp int) *grain {
	g := &grain{}
	i := 0
	put := func(width int, v int) {
		for k := width - 1; k >= 0; k-- {
			g.state[i] = (v>>k)&1 == 1
			i++
		}
	}
	put(2, grainField)
	put(4, grainSBox)
	put(12, grainFieldBits)
	put(12, t)
	put(10, rf)
	put(10, rp)
	for i < 80 {
		g.state[i] = true
		i++
	}
	for range 160 {
		g.step()
	}
	return g
}

func (g *grain) at(k int) bool { return g.state[(g.pos+k)%80] }

// step computes the next LFSR bit, shifts it in and returns it.
func (g *grain) step() bool {
	b := g.at(62) != g.at(51) != g.at(38) != g.at(23) != g.at(13) != g.at(0)
	g.state[g.pos] = b // the oldest bit's slot becomes the newest
	g.pos = (g.pos + 1) % 80
	return b
}

// next returns the next output bit of the self-shrinking generator.
func (g *grain) next() bool {
	for {
		first := g.step()
		second := g.step()
		if first {
			return second
		}
	}
}

// roundConstants returns (rf+rp)·t constants for width t.
func roundConstants(t, rf, rp int) []fr.Element {
	g := newGrain(t, rf, rp)
	modulus := fr.Modulus()
	out := make([]fr.Element, (rf+rp)*t)
	cand := new(big.Int)
	for i := range out {
		for {
			cand.SetUint64(0)
			for range grainFieldBits {
				cand.Lsh(cand, 1)
				if g.next() {
					cand.SetBit(cand, 0, 1)
				}
			}
			if cand.Cmp(modulus) < 0 {
				break
			}
		}
		out[i].SetBigInt(cand)
	}
	return out
}
