//go:build !cgo

package cuda

import (
	"context"
	"fmt"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// Backend is unavailable in builds without cgo; New always fails.
type Backend struct{}

// New reports that this binary cannot load the library.
func New(cfg Config) (*Backend, error) {
	return nil, fmt.Errorf("%w: this binary was built without cgo (CGO_ENABLED=0)", ErrLibrary)
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Load always fails in builds without cgo.
func (b *Backend) Load(ctx context.Context, pk *groth16.ProvingKey) (groth16.Key, error) {
	return nil, fmt.Errorf("%w: built without cgo", ErrLibrary)
}

// Device is empty in builds without cgo.
func (b *Backend) Device() DeviceInfo { return DeviceInfo{} }

func libraryDescription(b *Backend) string { return "" }

// RegisterBuffers always fails in builds without cgo.
func (b *Backend) RegisterBuffers(set *groth16.Buffers) (release func(), err error) {
	return nil, fmt.Errorf("%w: built without cgo", ErrLibrary)
}

// RegisterWitness always fails in builds without cgo.
func (b *Backend) RegisterWitness(w *groth16.Synthesized) (release func(), err error) {
	return nil, fmt.Errorf("%w: built without cgo", ErrLibrary)
}

// FixedBase is nil in builds without cgo.
func (b *Backend) FixedBase() groth16.FixedBase { return nil }

// SubgroupChecker is nil in builds without cgo.
func (b *Backend) SubgroupChecker() groth16.SubgroupChecker { return nil }

// DFTG1 always fails in builds without cgo.
func (b *Backend) DFTG1(ctx context.Context, points []curve.G1Affine, inverse bool, scale *groth16.DFTScale) error {
	return fmt.Errorf("%w: built without cgo", ErrLibrary)
}
