//go:build cgo

package cuda

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// LoadSynthetic creates a device-resident key of random points with the
// given shape (distinct pseudo-random points generated on the device; the
// verifying key's points are random multiples of the generators). Proofs
// made with it are well-formed group elements but prove nothing; it exists
// to time the prover at real sizes.
func (b *Backend) LoadSynthetic(ctx context.Context, sh SyntheticShape, seed uint64) (groth16.Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := sh.check(); err != nil {
		return nil, err
	}
	dev := b.cfg.Device
	k := &key{b: b, residency: string(ResidencyDevice),
		shape: shape{domain: int64(sh.Domain), inputs: int64(sh.Inputs), aux: int64(sh.Aux), numA: int64(sh.A), numB: int64(sh.B),
			hForm: sh.HForm}}
	fail := func(err error) (groth16.Key, error) {
		for _, buf := range k.buffers {
			buf.Free()
		}
		return nil, err
	}
	// H first; the other G1 queries copy its points where it has enough (a
	// device copy is far cheaper than generating), else get their own.
	nH := int(k.shape.hPoints())
	const stage = "cuda synthetic key"
	b.progress(stage, 0, 5)
	g1 := func(n int, s uint64) (*Buffer, error) {
		defer b.progress(stage, int64(len(k.buffers)), 5)
		buf, err := b.lib.Alloc(dev, int64(max(n, 1))*g1Size)
		if err != nil {
			return nil, err
		}
		k.buffers = append(k.buffers, buf)
		if n == 0 {
			return buf, nil
		}
		if len(k.buffers) > 1 && n <= nH {
			return buf, buf.CopyFrom(k.buffers[0], int64(n)*g1Size)
		}
		return buf, buf.FillRandomG1(n, s)
	}
	hBuf, err := g1(nH, seed)
	if err != nil {
		return fail(err)
	}
	lBuf, err := g1(sh.Aux, seed+1)
	if err != nil {
		return fail(err)
	}
	aBuf, err := g1(sh.A, seed+2)
	if err != nil {
		return fail(err)
	}
	b1Buf, err := g1(sh.B, seed+3)
	if err != nil {
		return fail(err)
	}
	b2Buf, err := b.lib.Alloc(dev, int64(max(sh.B, 1))*g2Size)
	if err != nil {
		return fail(err)
	}
	k.buffers = append(k.buffers, b2Buf)
	if sh.B > 0 {
		if err := b2Buf.FillRandomG2(sh.B, seed+4); err != nil {
			return fail(err)
		}
	}
	b.progress(stage, 5, 5)
	vk, lInput := syntheticVK(sh.Inputs, seed)
	k.vk = vk
	if sh.HForm == groth16.HCosetLagrange {
		k.lInput = lInput
	}
	desc := &keyDesc{domain: int64(sh.Domain), inputs: int64(sh.Inputs), aux: int64(sh.Aux), numA: int64(sh.A),
		numB: int64(sh.B), hForm: cHForm(sh.HForm), hBuf: hBuf.p, lBuf: lBuf.p, aBuf: aBuf.p, bg1Buf: b1Buf.p, bg2Buf: b2Buf.p,
		residency: residencyDevice}
	ck, err := b.lib.a.keyCreate(dev, desc)
	if err != nil {
		return fail(err)
	}
	k.ck = ck
	return k, nil
}

// syntheticVK draws the verifying key's points, and as many for a
// coset-Lagrange key's LInput, as random multiples of the generators.
func syntheticVK(inputs int, seed uint64) (*groth16.VerifyingKey, []curve.G1Affine) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	_, _, g1, g2 := curve.Generators()
	k := func() *big.Int { return new(big.Int).SetUint64(rng.Uint64() | 1) }
	p1 := func() (p curve.G1Affine) { p.ScalarMultiplication(&g1, k()); return }
	p2 := func() (p curve.G2Affine) { p.ScalarMultiplication(&g2, k()); return }
	vk := &groth16.VerifyingKey{AlphaG1: p1(), BetaG1: p1(), BetaG2: p2(), GammaG2: p2(), DeltaG1: p1(), DeltaG2: p2()}
	vk.IC = make([]curve.G1Affine, inputs)
	lInput := make([]curve.G1Affine, inputs)
	for i := range vk.IC {
		vk.IC[i] = p1()
		lInput[i] = p1()
	}
	return vk, lInput
}

// syntheticParams reads a synthetic key's points back into a ProvingKey
// (tests: the CPU backend then proves the same statement).
func (k *key) syntheticParams() (*groth16.ProvingKey, error) {
	if len(k.buffers) != 5 {
		return nil, fmt.Errorf("cuda: not a synthetic key")
	}
	pk := &groth16.ProvingKey{VK: *k.vk, HForm: k.shape.hForm, LInput: k.lInput}
	var err error
	if pk.H, err = k.buffers[0].ReadG1(int(k.shape.hPoints())); err != nil {
		return nil, err
	}
	if pk.L, err = k.buffers[1].ReadG1(int(k.shape.aux)); err != nil {
		return nil, err
	}
	if pk.A, err = k.buffers[2].ReadG1(int(k.shape.numA)); err != nil {
		return nil, err
	}
	if pk.BG1, err = k.buffers[3].ReadG1(int(k.shape.numB)); err != nil {
		return nil, err
	}
	if pk.BG2, err = k.buffers[4].ReadG2(int(k.shape.numB)); err != nil {
		return nil, err
	}
	return pk, nil
}
