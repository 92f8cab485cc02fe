package sha254

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

func TestSumKnownVectors(t *testing.T) {
	cases := []struct{ msg, sha256 string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	}
	for _, c := range cases {
		want, err := hex.DecodeString(c.sha256)
		require.NoError(t, err)
		want[31] &= 0x3f
		got := Sum([]byte(c.msg))
		require.Equal(t, want, got[:], "%q", c.msg)
	}
	// "abc": the last digest byte 0xad loses its top two bits.
	require.Equal(t, byte(0x2d), Sum([]byte("abc"))[31])
}

// TestSumElementRustFilProofsVector: rust-fil-proofs' test_sha256_hash prints
// the domain of Sha256Function over "hello" as a big-endian hex number.
func TestSumElementRustFilProofsVector(t *testing.T) {
	e := SumElement([]byte("hello"))
	require.Equal(t, "24988b93623304735e42a71f5c1e161b9ee2b9c52a3be8260ea3b05fba4df22c", e.Text(16))
}

func TestSumMatchesCryptoSHA256(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 31, 32, 55, 56, 63, 64, 65, 119, 1248, 4096} {
		msg := randomBytes(rng, n)
		want := sha256.Sum256(msg)
		got := Sum(msg)
		require.Equal(t, want[:31], got[:31])
		require.Equal(t, want[31]&0x3f, got[31])

		e := SumElement(msg)
		v := new(big.Int).SetBytes(reverse(got[:]))
		require.Equal(t, v.String(), e.String())
		require.Less(t, e.BigInt(new(big.Int)).BitLen(), 255)
		require.Equal(t, got, FromElement(&e))
	}
}

func TestElementRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 50 {
		var e fr.Element
		e.SetBigInt(new(big.Int).SetBytes(randomBytes(rng, 31)))
		le := FromElement(&e)
		require.True(t, e.Equal(new(fr.Element).SetBytes(reverse(le[:]))))
		back := ToElement(le)
		require.True(t, e.Equal(&back))
	}
}

// FuzzToElement: any 32 bytes read as a digest give the canonical element of
// their truncation, and encode back to exactly those truncated bytes.
func FuzzToElement(f *testing.F) {
	f.Add(make([]byte, 32))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != Size {
			return
		}
		var d [Size]byte
		copy(d[:], b)
		e := ToElement(d)
		Truncate(&d)
		require.Equal(t, d, FromElement(&e))
		require.Less(t, e.BigInt(new(big.Int)).BitLen(), 255)
	})
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}
