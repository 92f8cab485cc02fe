//go:build cgo

package cuda

import (
	"context"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// TestProveRegisteredWitness: a witness synthesized into a pool set whose
// arrays were registered (RegisterBuffers, through the pool's OnAlloc hook)
// uploads its vectors straight from them — the library reports every byte
// but the density bitmaps as direct — and proves the CPU backend's bytes; the
// same witness in ordinary memory goes through the staging buffers and
// proves the same. Dropping the set unregisters its four arrays.
func TestProveRegisteredWitness(t *testing.T) {
	f := getProveFixture(t)
	ctx := context.Background()
	syn, public := f.witness(t, 5, 0xabcdef987, 13)
	rnd := fixedRnd(0x1111, 0x2222)
	want := f.cpuProof(t, syn, rnd)
	b := newTestBackend(t, ResidencyDevice)
	key, err := b.Load(ctx, f.pk)
	require.NoError(t, err)
	defer func() { require.NoError(t, key.Close()) }()
	ranges0, bytes0 := b.Library().RegisteredHost()

	pool := groth16.NewBufferPool(f.circuit, 1)
	pool.OnAlloc(b.RegisterBuffers)
	set, err := pool.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, pool.Stats().Pinned)
	ranges, bytes := b.Library().RegisteredHost()
	require.Equal(t, ranges0+4, ranges)
	require.Equal(t, bytes0+pool.SetBytes(), bytes)
	nc := syn.NumConstraints
	copy(set.Wires, syn.Input)
	copy(set.Wires[len(syn.Input):], syn.Aux)
	copy(set.A, syn.A[:nc])
	copy(set.B, syn.B[:nc])
	copy(set.C, syn.C[:nc])
	reg, err := f.circuit.SynthesizedBuffers(set)
	require.NoError(t, err)

	densBytes := int64(len(syn.ADensityAux.Words)+len(syn.BDensityInput.Words)+len(syn.BDensityAux.Words)) * 8
	rows := int64(len(syn.A))
	for _, c := range []struct {
		name           string
		w              *groth16.Synthesized
		direct, staged int64
	}{
		{"registered", reg, (3*rows + int64(len(syn.Input)+len(syn.Aux))) * frSize, densBytes},
		{"pageable", syn, 0, (3*rows+int64(len(syn.Input)+len(syn.Aux)))*frSize + densBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk, err := key.Prepare(ctx, c.w, rnd)
			require.NoError(t, err)
			defer tk.Release()
			require.NoError(t, tk.Upload(ctx))
			require.NoError(t, tk.Compute(ctx))
			direct, staged := tk.(*task).UploadBytes()
			require.Equal(t, c.direct, direct, "bytes copied straight from registered memory")
			require.Equal(t, c.staged, staged, "bytes copied through staging")
			require.Equal(t, direct, tk.Timings().UploadDirectBytes, "the timings report the direct bytes")
			got, err := tk.Finish(ctx)
			require.NoError(t, err)
			require.Equal(t, want, proofBytes(t, got))
			require.NoError(t, groth16.Verify(&f.pk.VK, got, public))
		})
	}
	reg.Release()
	pool.Close()
	require.Equal(t, 0, pool.Stats().Pinned)
	ranges, bytes = b.Library().RegisteredHost()
	require.Equal(t, ranges0, ranges)
	require.Equal(t, bytes0, bytes)
}

// TestHostRegisterErrors: refused registrations come back as ErrInvalid
// DeviceErrors with the library's message, and nothing stays registered.
func TestHostRegisterErrors(t *testing.T) {
	lib, _ := gpu(t)
	ranges0, _ := lib.RegisteredHost()
	buf := make([]fr.Element, 1024)
	p := unsafe.Pointer(&buf[0])

	_, err := lib.RegisterHost(nil, 64)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "nil pointer")
	_, err = lib.RegisterHost(p, 0)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "zero bytes")

	// the registered range is big[1024:2048]
	big := make([]fr.Element, 4096)
	q := unsafe.Pointer(&big[1024])
	unreg, err := lib.RegisterHost(q, 1024*frSize)
	require.NoError(t, err)
	// overlapping ranges: inside, from below into it, from inside past its end, around it
	for _, c := range []struct{ lo, hi int }{{1030, 1040}, {512, 1025}, {2047, 3000}, {0, 4096}, {1024, 2048}} {
		_, err = lib.RegisterHost(unsafe.Pointer(&big[c.lo]), int64(c.hi-c.lo)*frSize)
		require.ErrorIs(t, err, ErrInvalid, "%+v", c)
		require.ErrorContains(t, err, "overlaps")
	}
	// adjacent ranges do not overlap
	for _, c := range []struct{ lo, hi int }{{0, 1024}, {2048, 4096}} {
		u, err := lib.RegisterHost(unsafe.Pointer(&big[c.lo]), int64(c.hi-c.lo)*frSize)
		if err != nil { // a GPU refuses a range sharing a page with a locked one
			require.ErrorIs(t, err, ErrCUDA, "%+v", c)
			continue
		}
		require.NoError(t, u())
	}
	ranges, _ := lib.RegisteredHost()
	require.Equal(t, ranges0+1, ranges)

	// unregistering what was never registered (an inner pointer, a fresh one)
	err = lib.a.hostUnregister(unsafe.Pointer(&big[1025]))
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "not registered")
	err = lib.a.hostUnregister(nil)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "nil pointer")

	require.NoError(t, unreg())
	require.NoError(t, unreg(), "a second call does nothing")
	err = lib.a.hostUnregister(q)
	require.ErrorIs(t, err, ErrInvalid, "already unregistered")
	require.ErrorContains(t, err, "not registered")
}
