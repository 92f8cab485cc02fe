package groth16

import (
	"context"
	"fmt"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// SubgroupChecker tests prime-order subgroup membership of many points at
// once, for a decoder told to use it (SubgroupCheckWith) instead of checking
// point by point on the CPU: a GPU does the ~430 M points of a 32 GiB
// parameter file in seconds where the CPU check takes the cores tens of
// minutes. Each method returns the index of the first point of pts outside
// the subgroup, or -1; the points it is given are on the curve (the decoder
// has checked that). Methods may be called from one goroutine at a time.
type SubgroupChecker interface {
	FirstNotInSubgroupG1(pts []curve.G1Affine) (int, error)
	FirstNotInSubgroupG2(pts []curve.G2Affine) (int, error)
}

// SubgroupCheckWith makes the decoder check the proving-key sections' points
// for canonical coordinates and the curve equation only, and then hand each
// section to c for the subgroup check (in blocks, with progress under the
// stage "params: subgroup check" and cancellation between blocks). The
// verifying key is checked on the CPU as always. A point outside the
// subgroup is the same *FormatError wrapping ErrNotInSubgroup as the CPU
// check reports. SkipSubgroupCheck, given too, wins.
func SubgroupCheckWith(c SubgroupChecker) ParamsOption {
	return func(cfg *paramsConfig) { cfg.checker = c }
}

// subgroupBlock is the number of points per checker call.
const subgroupBlock = 1 << 24

// checkSectionSubgroup runs a checker over one decoded section.
func checkSectionSubgroup[P any](ctx context.Context, pts []P, s Section, first func([]P) (int, error),
	pr *progressReporter) error {
	for start := 0; start < len(pts); start += subgroupBlock {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+subgroupBlock, len(pts))
		i, err := first(pts[start:end])
		if err != nil {
			return fmt.Errorf("groth16: section %s: subgroup check: %w", s.Name, err)
		}
		if i >= 0 {
			idx := start + i
			return &FormatError{Section: s.Name, Index: idx, Offset: s.Offset + int64(idx)*int64(s.PointSize), Err: ErrNotInSubgroup}
		}
		pr.add(int64(end - start))
	}
	return nil
}

// externalSubgroup reports whether the sections' subgroup check goes to a
// checker after decoding (instead of the decoder's per-point check).
func (c paramsConfig) externalSubgroup() bool { return c.subgroup && c.checker != nil }

// decoderSubgroup reports whether the decoder checks each point itself.
func (c paramsConfig) decoderSubgroup() bool { return c.subgroup && c.checker == nil }

func (c paramsConfig) checkG1(ctx context.Context, pts []curve.G1Affine, s Section, pr *progressReporter) error {
	if !c.externalSubgroup() {
		return nil
	}
	return checkSectionSubgroup(ctx, pts, s, c.checker.FirstNotInSubgroupG1, pr)
}

func (c paramsConfig) checkG2(ctx context.Context, pts []curve.G2Affine, s Section, pr *progressReporter) error {
	if !c.externalSubgroup() {
		return nil
	}
	return checkSectionSubgroup(ctx, pts, s, c.checker.FirstNotInSubgroupG2, pr)
}
