package groth16

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

// tinyParams is a valid .params image of a 3-step chain, the seed of the
// params fuzzers.
func tinyParams(tb testing.TB) ([]byte, *ProvingKey) {
	pk, _, err := SetupR1CS(context.Background(), groth16test.ChainSystem(3, 1, 2, 3), SetupSeed([]byte("fuzz")))
	require.NoError(tb, err)
	var buf bytes.Buffer
	require.NoError(tb, WriteParams(&buf, pk))
	return buf.Bytes(), pk
}

func FuzzProofUnmarshal(f *testing.F) {
	pk, _, err := SetupR1CS(context.Background(), groth16test.ChainSystem(3, 1, 2, 3), SetupSeed([]byte("fuzz")))
	require.NoError(f, err)
	key, err := NewCPUBackend().Load(context.Background(), pk)
	require.NoError(f, err)
	w, _ := chainInstance(f, 3, 1, 2, 3)
	p, _, err := Prove(context.Background(), key, w, fixedRandomness(7, 8))
	require.NoError(f, err)
	good, err := p.MarshalBinary()
	require.NoError(f, err)
	f.Add(good)
	f.Add(make([]byte, ProofSize))
	f.Add(bytes.Repeat([]byte{0xff}, ProofSize))
	f.Add(good[:100])
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Proof
		err := p.UnmarshalBinary(data)
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		// Accepted bytes are canonical: they re-encode identically, and the
		// points are valid subgroup elements.
		back, err := p.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, data, back)
		require.True(t, p.A.IsInSubGroup() && p.B.IsInSubGroup() && p.C.IsInSubGroup())
	})
}

func FuzzParamsLayout(f *testing.F) {
	good, _ := tinyParams(f)
	f.Add(good)
	f.Add(good[:vkFixedSize+4])
	f.Add(make([]byte, vkFixedSize+24))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseParamsLayout(data)
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		// An accepted layout tiles the input exactly.
		off := int64(vkFixedSize)
		for _, s := range l.Sections() {
			require.Equal(t, off+4, s.Offset)
			off = s.End()
		}
		require.Equal(t, int64(len(data)), off)
	})
}

func FuzzDecodeParams(f *testing.F) {
	good, pk := tinyParams(f)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeParams(data, ParamsWorkers(1))
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		var buf bytes.Buffer
		require.NoError(t, WriteParams(&buf, got))
		require.Equal(t, data, buf.Bytes())
		if bytes.Equal(data, good) {
			require.Equal(t, pk, got)
		}
	})
}

func FuzzReadVerifyingKey(f *testing.F) {
	_, pk := tinyParams(f)
	var buf bytes.Buffer
	require.NoError(f, WriteVerifyingKey(&buf, &pk.VK))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		vk, err := ReadVerifyingKey(r)
		if err != nil {
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "error %v", err)
			return
		}
		var out bytes.Buffer
		require.NoError(t, WriteVerifyingKey(&out, vk))
		require.Equal(t, data[:len(data)-r.Len()], out.Bytes())
	})
}
