//go:build cgo

package cuda

import (
	"context"
	"slices"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// TestProveRegisteredWitness: a witness synthesized into a pool set whose
// arrays were registered (RegisterBuffers, through the pool's OnAlloc hook)
// uploads straight from them: a, b, c and aux as their value codes, the
// device writing 0, 1 and r − 1 itself and reading the values coded other
// from the set — the library reports the coded bytes and counts those
// values —, with C2G_UPLOAD_CODES=off as whole vectors (every byte but the
// density bitmaps direct); the same witness in ordinary memory, with or
// without codes, goes whole through the staging buffers. Every way proves
// the CPU backend's bytes; a wrong code changes the proof (the codes are
// what the device used). Dropping the set unregisters its eight arrays.
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
	require.Equal(t, ranges0+8, ranges)
	require.Equal(t, bytes0+pool.SetBytes(), bytes)
	nc := syn.NumConstraints
	copy(set.Wires, syn.Input)
	copy(set.Wires[len(syn.Input):], syn.Aux)
	copy(set.A, syn.A[:nc])
	copy(set.B, syn.B[:nc])
	copy(set.C, syn.C[:nc])
	groth16.EncodeCodes(set.WireCodes, set.Wires)
	groth16.EncodeCodes(set.ACodes, set.A)
	groth16.EncodeCodes(set.BCodes, set.B)
	groth16.EncodeCodes(set.CCodes, set.C)
	reg, err := f.circuit.SynthesizedBuffers(set)
	require.NoError(t, err)
	require.NoError(t, reg.CheckCodes())
	others := int64(0)
	for _, v := range [][]uint8{reg.Codes.A, reg.Codes.B, reg.Codes.C, reg.Codes.Aux} {
		for _, c := range v {
			if c == groth16.CodeOther {
				others++
			}
		}
	}
	pageableCoded := *syn
	pageableCoded.Codes = reg.Codes

	densBytes := int64(len(syn.ADensityAux.Words)+len(syn.BDensityInput.Words)+len(syn.BDensityAux.Words)) * 8
	rows, nIn, nAux := int64(len(syn.A)), int64(len(syn.Input)), int64(len(syn.Aux))
	whole := (3*rows + nIn + nAux) * frSize
	prove := func(t *testing.T, w *groth16.Synthesized) (*task, []byte, *groth16.Proof) {
		tk, err := key.Prepare(ctx, w, rnd)
		require.NoError(t, err)
		t.Cleanup(tk.Release)
		require.NoError(t, tk.Upload(ctx))
		require.NoError(t, tk.Compute(ctx))
		got, err := tk.Finish(ctx)
		require.NoError(t, err)
		return tk.(*task), proofBytes(t, got), got
	}
	for _, c := range []struct {
		name                  string
		w                     *groth16.Synthesized
		env                   []string // name, value, …
		direct, staged, coded int64
	}{
		{"registered", reg, nil, (3*rows+nAux)*1 + nIn*frSize, densBytes, (3*rows + nAux) * frSize},
		{"registered, not pipelined", reg, []string{"C2G_UPLOAD_PIPELINE", "off"},
			(3*rows+nAux)*1 + nIn*frSize, densBytes, (3*rows + nAux) * frSize},
		{"registered, B, A then L", reg, []string{"C2G_LAB_ORDER", "bal"},
			(3*rows+nAux)*1 + nIn*frSize, densBytes, (3*rows + nAux) * frSize},
		{"registered, codes off", reg, []string{"C2G_UPLOAD_CODES", "off"}, whole, densBytes, 0},
		{"pageable", syn, nil, 0, whole + densBytes, 0},
		{"pageable, with codes", &pageableCoded, nil, 0, whole + densBytes, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < len(c.env); i += 2 {
				t.Setenv(c.env[i], c.env[i+1])
			}
			tk, got, proof := prove(t, c.w)
			direct, staged := tk.UploadBytes()
			require.Equal(t, c.direct, direct, "bytes copied straight from registered memory")
			require.Equal(t, c.staged, staged, "bytes copied through staging")
			require.Equal(t, direct, tk.Timings().UploadDirectBytes, "the timings report the direct bytes")
			coded, other := tk.UploadCodes()
			require.Equal(t, c.coded, coded, "bytes of values sent as codes")
			require.Equal(t, c.coded, tk.Timings().UploadCodedBytes, "the timings report the coded bytes")
			if c.coded > 0 {
				require.Equal(t, others, other, "values read from host memory: those coded other")
			} else {
				require.Zero(t, other)
			}
			require.Equal(t, want, got)
			require.NoError(t, groth16.Verify(&f.pk.VK, proof, public))
		})
	}
	t.Run("a wrong code", func(t *testing.T) {
		i := slices.Index(reg.Codes.Aux, groth16.CodeOne)
		require.GreaterOrEqual(t, i, 0, "some aux value is one")
		reg.Codes.Aux[i] = groth16.CodeZero
		defer func() { reg.Codes.Aux[i] = groth16.CodeOne }()
		_, got, proof := prove(t, reg)
		require.NotEqual(t, want, got)
		require.Error(t, groth16.Verify(&f.pk.VK, proof, public))
	})
	for _, c := range []struct {
		knob, value, msg string
		atCompute        bool // refused by Compute (before any work), not Upload
	}{
		{"C2G_UPLOAD_CODES", "yes", "C2G_UPLOAD_CODES=yes: want on or off", false},
		{"C2G_UPLOAD_PIPELINE", "yes", "C2G_UPLOAD_PIPELINE=yes: want on or off", false},
		{"C2G_TRACE", "yes", "C2G_TRACE=yes: want on or off", false},
		{"C2G_LAB_ORDER", "lba2", "C2G_LAB_ORDER=lba2: want a permutation of lab", true},
		{"C2G_LAB_ORDER", "lla", "C2G_LAB_ORDER=lla: want a permutation of lab", true},
	} {
		t.Run("bad "+c.knob+"="+c.value, func(t *testing.T) {
			tk, err := key.Prepare(ctx, reg, rnd)
			require.NoError(t, err)
			defer tk.Release()
			if c.atCompute {
				require.NoError(t, tk.Upload(ctx))
			}
			t.Setenv(c.knob, c.value)
			if c.atCompute {
				err = tk.Compute(ctx)
			} else {
				err = tk.Upload(ctx)
			}
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, c.msg)
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
