package sha254

// SHA-256 constants (FIPS 180-4 §4.2.2, §5.3.3).
var (
	roundK = [64]uint32{
		0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
		0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
		0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
		0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
		0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
		0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
		0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
		0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
	}
	initialState = [8]uint32{
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	}
)

func (g *gadget) bigSigma(w *word, r1, r2, r3 int) *word {
	out := &word{}
	for i := range 32 {
		out.b[i] = g.xor3(w.b[(i+r1)%32], w.b[(i+r2)%32], w.b[(i+r3)%32])
	}
	return out
}

func (g *gadget) smallSigma(w *word, r1, r2, s int) *word {
	a, b, c := rotr(w, r1), rotr(w, r2), shr(w, s)
	out := &word{}
	for i := range 32 {
		out.b[i] = g.xor3(a.b[i], b.b[i], c.b[i])
	}
	return out
}

// compress is SHA-256's compression function on one 16-word block.
func (g *gadget) compress(state [8]*word, block [16]*word) [8]*word {
	var w [64]*word
	copy(w[:], block[:])
	for i := 16; i < 64; i++ {
		s0 := g.smallSigma(w[i-15], 7, 18, 3)
		s1 := g.smallSigma(w[i-2], 17, 19, 10)
		w[i] = g.add(s1, w[i-7], s0, w[i-16])
	}

	a, b, c, d, e, f, h, hh := state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
	var lastE, lastA []*word
	for i := range 64 {
		s1 := g.bigSigma(e, 6, 11, 25)
		ch := &word{}
		for j := range 32 {
			ch.b[j] = g.ch(e.b[j], f.b[j], h.b[j])
		}
		s0 := g.bigSigma(a, 2, 13, 22)
		maj := &word{}
		for j := range 32 {
			maj.b[j] = g.maj(a.b[j], b.b[j], c.b[j])
		}
		k := constWord(roundK[i])
		// T1 = hh + Σ1 + Ch + K + W is never materialised: e' = d + T1 and
		// a' = T1 + Σ0 + Maj are each one addition.
		opsE := []*word{d, hh, s1, ch, k, w[i]}
		opsA := []*word{hh, s1, ch, k, w[i], s0, maj}
		if i == 63 {
			// The last e' and a' are only added to the chaining state:
			// fold them into those two additions (bellman defers them the
			// same way), saving two 33-bit sums.
			lastE, lastA = opsE, opsA
			break
		}
		newE := g.add(opsE...)
		newA := g.add(opsA...)
		hh, h, f, e, d, c, b, a = h, f, e, newE, c, b, a, newA
	}
	// After round 63: (a', a, b, c, e', e, f, h) with a', e' deferred.
	var out [8]*word
	out[0] = g.add(append([]*word{state[0]}, lastA...)...)
	out[1] = g.add(state[1], a)
	out[2] = g.add(state[2], b)
	out[3] = g.add(state[3], c)
	out[4] = g.add(append([]*word{state[4]}, lastE...)...)
	out[5] = g.add(state[5], e)
	out[6] = g.add(state[6], f)
	out[7] = g.add(state[7], h)
	return out
}
