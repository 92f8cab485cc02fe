//go:build cgo

package cuda

import (
	"context"
	"fmt"
	"math/bits"
	"time"
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// MaxDFTPoints is the largest transform DFTG1 takes: 2^27 points, the
// domain of a 32 GiB sector's circuit.
const MaxDFTPoints = 1 << 27

// DFTStats describes one group DFT.
type DFTStats struct {
	Millis       float64 // the whole call: upload, stages, download (host clock)
	DeviceMillis float64 // device time of the butterfly stages
	ScalarMuls   int64   // twiddle multiplications (butterflies whose twiddle is not 1)
	ScaleMuls    int64   // multiplications of the input by a groth16.DFTScale (n, or 0 without one)
	WindowBits   int     // signed window of the GLV halves (C2G_DFT_WINDOW)
	AffineTable  bool    // each multiple table made affine (C2G_DFT_AFFINE)
}

// dftPollEvery is how often a running DFT's cancellation and progress are
// looked at.
const dftPollEvery = 200 * time.Millisecond

// DFTG1 transforms points in place on device dev: out_i = Σ_j ω^{ij}·s_j·in_j,
// or Σ_j ω^{−ij}·s_j·in_j when inverse (no 1/n factor), ω the primitive
// len(points)-th root of unity of gnark-crypto's fft domain
// (fft.NewDomain(n).Generator) and s_j = scale.C·scale.X^j, multiplied on
// the device (1 when scale is nil); len(points) is a power of two ≤ 2^27 and
// every point lies in G1. ctx cancels the transform between launches (its
// error comes back, the points unchanged); progress, when not nil, receives
// the scalar multiplications done (scale and twiddles) and their total
// while it runs.
func (l *Library) DFTG1(ctx context.Context, dev int, points []curve.G1Affine, inverse bool, scale *groth16.DFTScale,
	progress func(done, total int64)) (DFTStats, error) {
	logN, err := dftLogN(len(points))
	if err != nil {
		return DFTStats{}, err
	}
	if err := ctx.Err(); err != nil {
		return DFTStats{}, err
	}
	ctl := newDFTControl()
	if ctl.c == nil {
		return DFTStats{}, fmt.Errorf("%w: dft: no host memory for the control block", ErrDeviceOOM)
	}
	defer ctl.free()
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(dftPollEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				ctl.cancel()
				return
			case <-tick.C:
				if progress != nil {
					if done, total := ctl.progress(); total > 0 {
						progress(done, total)
					}
				}
			}
		}
	}()
	var sc unsafe.Pointer
	if scale != nil {
		pair := &[2]fr.Element{scale.C, scale.X}
		sc = unsafe.Pointer(pair)
	}
	st, err := l.a.dftG1(dev, unsafe.Pointer(&points[0]), logN, inverse, sc, ctl)
	close(stop)
	<-watched
	if err != nil {
		if ctx.Err() != nil {
			return st, fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return st, err
	}
	if progress != nil {
		done, total := ctl.progress()
		progress(done, total)
	}
	return st, nil
}

// dftLogN is log2 of a transform's length n, which must be a power of two
// from 1 to 2^27.
func dftLogN(n int) (int, error) {
	if n <= 0 || n&(n-1) != 0 || n > MaxDFTPoints {
		return 0, fmt.Errorf("%w: dft: %d points: want a power of two from 1 to 2^27", ErrInvalid, n)
	}
	return bits.TrailingZeros(uint(n)), nil
}

// DFTG1 transforms points in place on the backend's device (see
// Library.DFTG1), reporting progress to Config.Progress as stage "cuda dft"
// in scalar multiplications. b.DFTG1 is a groth16.G1DFT.
func (b *Backend) DFTG1(ctx context.Context, points []curve.G1Affine, inverse bool, scale *groth16.DFTScale) error {
	var progress func(done, total int64)
	if b.cfg.Progress != nil {
		progress = func(done, total int64) { b.cfg.Progress("cuda dft", done, total) }
	}
	_, err := b.lib.DFTG1(ctx, b.cfg.Device, points, inverse, scale, progress)
	return err
}
