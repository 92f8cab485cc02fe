package poseidon

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// hashTextbook is the unoptimised permutation (neptune's HashMode::Correct):
// every round adds its t constants, applies the S-box (to all elements in
// full rounds, to element 0 in partial rounds) and multiplies by the MDS
// matrix. It is the reference the optimised form is checked against.
func hashTextbook(p *params, inputs []fr.Element) fr.Element {
	t := p.width
	st := make([]fr.Element, t)
	st[0] = p.tag
	copy(st[1:], inputs)
	half := p.full / 2
	for r := range p.full + p.partial {
		for i := range st {
			st[i].Add(&st[i], &p.rc[r*t+i])
		}
		if r < half || r >= half+p.partial {
			for i := range st {
				sbox(&st[i])
			}
		} else {
			sbox(&st[0])
		}
		st = p.mds.apply(st)
	}
	return st[1]
}
