//go:build cgo

package cuda

import (
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// FirstNotInSubgroupG1 returns the index of the first of pts outside G1's
// prime-order subgroup, or -1, testing them on device dev (c2g_subgroup_check:
// the points are copied through the device in chunks). Every point must be
// on the curve, which the test assumes (the parameter decoder checks it);
// infinity is in the subgroup.
func (l *Library) FirstNotInSubgroupG1(dev int, pts []curve.G1Affine) (int, error) {
	if len(pts) == 0 {
		return -1, nil
	}
	i, err := l.a.subgroupCheck(dev, 1, unsafe.Pointer(&pts[0]), int64(len(pts)))
	return int(i), err
}

// FirstNotInSubgroupG2 is FirstNotInSubgroupG1 for G2 points.
func (l *Library) FirstNotInSubgroupG2(dev int, pts []curve.G2Affine) (int, error) {
	if len(pts) == 0 {
		return -1, nil
	}
	i, err := l.a.subgroupCheck(dev, 2, unsafe.Pointer(&pts[0]), int64(len(pts)))
	return int(i), err
}

// SubgroupChecker is a groth16.SubgroupChecker on device dev, for
// groth16.SubgroupCheckWith: a worker on this backend checks its parameter
// files' points here at start.
func (l *Library) SubgroupChecker(dev int) groth16.SubgroupChecker {
	return deviceChecker{l: l, dev: dev}
}

// SubgroupChecker is the library's checker on the backend's device.
func (b *Backend) SubgroupChecker() groth16.SubgroupChecker {
	return b.lib.SubgroupChecker(b.cfg.Device)
}

type deviceChecker struct {
	l   *Library
	dev int
}

func (c deviceChecker) FirstNotInSubgroupG1(pts []curve.G1Affine) (int, error) {
	return c.l.FirstNotInSubgroupG1(c.dev, pts)
}

func (c deviceChecker) FirstNotInSubgroupG2(pts []curve.G2Affine) (int, error) {
	return c.l.FirstNotInSubgroupG2(c.dev, pts)
}
