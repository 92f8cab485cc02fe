package groth16

import (
	"context"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// The CPU backend's multi-scalar multiplications, over G1 and G2 alike
// (gnark-crypto's G1Jac / G2Jac with their affine points).

// jacobian is what the MSMs need of a gnark-crypto Jacobian point type J
// with affine points A.
type jacobian[A, J any] interface {
	*J
	AddAssign(*J) *J
	SubAssign(*J) *J
	AddMixed(*A) *J
	MultiExp([]A, []fr.Element, ecc.MultiExpConfig) (*J, error)
}

// msmChunk bounds the points of one gnark-crypto MultiExp call, so a
// cancellation is seen between chunks of a very large MSM at a negligible
// cost in bucket reductions.
const msmChunk = 1 << 22

// multiExp sets res = Σ sc[i]·pts[i] with gnark-crypto's MultiExp, in
// chunks of msmChunk points (ctx checked between them).
func multiExp[A, J any, PJ jacobian[A, J]](ctx context.Context, res PJ, pts []A, sc []fr.Element, nbTasks int) error {
	if len(pts) != len(sc) {
		return fmt.Errorf("%w: msm of %d points and %d scalars", ErrShape, len(pts), len(sc))
	}
	var zero J // Z = 0: the point at infinity
	*res = zero
	for s := 0; s < len(pts); s += msmChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := min(s+msmChunk, len(pts))
		var p J
		if _, err := PJ(&p).MultiExp(pts[s:e], sc[s:e], ecc.MultiExpConfig{NbTasks: nbTasks}); err != nil {
			return fmt.Errorf("groth16: msm: %w", err)
		}
		res.AddAssign(&p)
	}
	return nil
}

// msmWitness sets res = Σ sc[i]·pts[i] for scalars that are witness values:
// a PoRep partition's are 98.5 % 0, 1 and r − 1 (CodeOf; aux: 55.5 %
// zero, 29.7 % one, 13.6 % r − 1). MultiExp gives an r − 1 the cost of
// any full-size scalar, a bucket addition in every window, so here the
// points of scalars 1 are summed and those of r − 1 summed and
// subtracted, one mixed addition each on nw goroutines, and only the
// other scalars' points go through multiExp.
func msmWitness[A, J any, PJ jacobian[A, J]](ctx context.Context, res PJ, pts []A, sc []fr.Element, nw int) error {
	if len(pts) != len(sc) {
		return fmt.Errorf("%w: msm of %d points and %d scalars", ErrShape, len(pts), len(sc))
	}
	var (
		mu       sync.Mutex
		ones     J // Σ of the points of scalars 1 minus those of r − 1
		otherPts []A
		otherSc  []fr.Element
	)
	chunk := max(1<<12, len(pts)/(8*workers(nw)))
	err := parallelRange(ctx, len(pts), chunk, nw, func(s, e int) error {
		var one, neg J
		var op []A
		var os []fr.Element
		for i := s; i < e; i++ {
			switch CodeOf(&sc[i]) {
			case CodeOne:
				PJ(&one).AddMixed(&pts[i])
			case CodeMinusOne:
				PJ(&neg).AddMixed(&pts[i])
			case CodeOther, CodeTwo:
				op = append(op, pts[i])
				os = append(os, sc[i])
			}
		}
		PJ(&one).SubAssign(&neg)
		mu.Lock()
		defer mu.Unlock()
		PJ(&ones).AddAssign(&one)
		otherPts = append(otherPts, op...)
		otherSc = append(otherSc, os...)
		return nil
	})
	if err != nil {
		return err
	}
	if err := multiExp(ctx, res, otherPts, otherSc, nw); err != nil {
		return err
	}
	res.AddAssign(&ones)
	return nil
}
