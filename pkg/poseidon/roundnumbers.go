package poseidon

import "math"

// Round-number search of the Poseidon reference (calc_round_numbers.py) as
// neptune ports it (src/round_numbers.rs): prime bit length taken as 256,
// security level 128 bits, single-precision arithmetic, and the security
// margin (two more full rounds, 7.5 % more partial rounds rounded up).
const (
	roundPrimeBits   = 256
	roundSecurityLvl = 128
)

// roundNumbers returns (R_F, R_P) for state width t.
func roundNumbers(t int) (full, partial int) {
	minCost := math.MaxInt
	for rfStart := 2; rfStart <= 1000; rfStart += 2 {
		// neptune mutates the full-round counter inside the inner loop each
		// time it applies the margin; reproduced so the search is the same.
		rf := rfStart
		for rpStart := 4; rpStart < 200; rpStart++ {
			if !roundsSecure(t, rf, rpStart) {
				continue
			}
			rf += 2
			rp := int(ceil32(mul32(1.075, float32(rpStart))))
			cost := t*rf + rp
			if cost < minCost || (cost == minCost && rf < full) {
				full, partial, minCost = rf, rp, cost
			}
		}
	}
	return full, partial
}

// roundsSecure evaluates the Poseidon paper's inequalities (statistical,
// interpolation, two Gröbner-basis bounds) in float32 as neptune does.
func roundsSecure(t, rf, rp int) bool {
	var (
		n  = float32(roundPrimeBits)
		m  = float32(roundSecurityLvl)
		tf = float32(t)
		pf = float32(rp)
	)
	rfStat := float32(10)
	if m <= mul32(n-3, tf+1) {
		rfStat = 6
	}
	rfInterp := mul32(0.43, m) + float32(math.Log2(float64(tf))) - pf
	rfGrob1 := mul32(0.21, n) - pf
	rfGrob2 := (mul32(0.14, n) - 1 - pf) / (tf - 1)
	maxRF := 0
	for _, v := range []float32{rfStat, rfInterp, rfGrob1, rfGrob2} {
		// Rust's `as usize` saturates negative values to 0.
		if c := int(max(ceil32(v), 0)); c > maxRF {
			maxRF = c
		}
	}
	return rf >= maxRF
}

// mul32 multiplies in single precision; the explicit conversion keeps the
// compiler from fusing it with a following addition.
func mul32(a, b float32) float32 { return float32(a * b) }

func ceil32(x float32) float32 { return float32(math.Ceil(float64(x))) }
