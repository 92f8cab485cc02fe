package sha256

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
	"github.com/c2cluster/c2cluster/pkg/r1cs/r1cstest"
)

// The reference's counts and hashes (../shared/oracle/README.md).
const (
	blockNoPaddingAux         = 26326
	blockNoPaddingConstraints = 26352
	blockNoPaddingHash        = "a91be46c89fe4cb18f85d99956bf9b1afe0a96d1b6c960a30d4e9dcafcf501ba"
	hash1024Aux               = 72018
	hash1024Constraints       = 72090
	hash1024Hash              = "4bdddb7b847a238677e33c65f58a043eb0def34fd073ee93ab6c2ea3883b844e"
	compressionConstraints    = 25840
)

// allocInput allocates bits as the reference's tests do: bit i in the
// namespace "input bit i".
func allocInput(cs r1cs.CS, msg []byte) []boolean.Boolean {
	out := make([]boolean.Boolean, 0, 8*len(msg))
	for _, by := range msg {
		for k := 7; k >= 0; k-- {
			cs.Push(r1cs.Nf("input bit %d", len(out)))
			out = append(out, boolean.Is(boolean.AllocBit(cs, by>>k&1 == 1)))
			cs.Pop()
		}
	}
	return out
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func bitsToBytes(t *testing.T, bits []boolean.Boolean) []byte {
	t.Helper()
	out := make([]byte, len(bits)/8)
	for i, b := range bits {
		if b.Value() {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

func TestHashOneBlockOracleDump(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	msg := randomBytes(rng, 64)
	s := r1cs.NewSystem(r1cs.WithNames(), r1cs.WithValues())
	in := allocInput(s, msg)
	s.Push(r1cs.N("sha256"))
	out := Hash(s, in)
	s.Pop()
	r1cstest.CompareDump(t, s, "sha256-1block-padded.r1cs.txt.gz")
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(msg)
	if got := bitsToBytes(t, out); hex.EncodeToString(got) != hex.EncodeToString(want[:]) {
		t.Fatalf("digest %x, want %x", got, want)
	}
}

func TestBlockNoPaddingOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	msg := randomBytes(rng, 64)
	s := r1cs.NewSystem(r1cs.WithValues())
	out := BlockNoPadding(s, allocInput(s, msg))
	if s.NumInputs() != 1 || s.NumAux() != blockNoPaddingAux || s.NumConstraints() != blockNoPaddingConstraints {
		t.Fatalf("%d inputs, %d aux, %d constraints", s.NumInputs(), s.NumAux(), s.NumConstraints())
	}
	if h := s.Hash(); hex.EncodeToString(h[:]) != blockNoPaddingHash {
		t.Fatalf("hash %x, reference %s", h, blockNoPaddingHash)
	}
	if s.NumConstraints()-512 != compressionConstraints {
		t.Fatalf("compression: %d constraints", s.NumConstraints()-512)
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	// No padding: the first compression of the message itself.
	var st [8]uint32
	copy(st[:], iv[:])
	want := nativeCompress(st, msg)
	got := bitsToBytes(t, out)
	for i, v := range want {
		if g := uint32(got[4*i])<<24 | uint32(got[4*i+1])<<16 | uint32(got[4*i+2])<<8 | uint32(got[4*i+3]); g != v {
			t.Fatalf("word %d: %08x, want %08x", i, g, v)
		}
	}
}

func TestHash1024Oracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	msg := randomBytes(rng, 128)
	s := r1cs.NewSystem(r1cs.WithValues())
	out := Hash(s, allocInput(s, msg))
	if s.NumInputs() != 1 || s.NumAux() != hash1024Aux || s.NumConstraints() != hash1024Constraints {
		t.Fatalf("%d inputs, %d aux, %d constraints", s.NumInputs(), s.NumAux(), s.NumConstraints())
	}
	if h := s.Hash(); hex.EncodeToString(h[:]) != hash1024Hash {
		t.Fatalf("hash %x, reference %s", h, hash1024Hash)
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(msg)
	if got := bitsToBytes(t, out); hex.EncodeToString(got) != hex.EncodeToString(want[:]) {
		t.Fatalf("digest %x, want %x", got, want)
	}
}

// TestHashAgainstCryptoSHA256: messages of several lengths (0 to 3
// blocks, block boundaries, the padding spilling into a new block), each
// satisfied and equal to crypto/sha256.
func TestHashAgainstCryptoSHA256(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 31, 55, 56, 63, 64, 65, 119, 120, 128, 150} {
		msg := randomBytes(rng, n)
		s := r1cs.NewSystem(r1cs.WithValues())
		out := Hash(s, allocInput(s, msg))
		if err := s.Satisfied(); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		want := sha256.Sum256(msg)
		if got := bitsToBytes(t, out); hex.EncodeToString(got) != hex.EncodeToString(want[:]) {
			t.Fatalf("%d bytes: digest %x, want %x", n, got, want)
		}
	}
}

// TestHashMutation: changing one intermediate value (a carry bit of an
// addition, a ch bit, or an output bit) breaks satisfaction.
func TestHashMutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	msg := randomBytes(rng, 64)
	s := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
	out := Hash(s, allocInput(s, msg))
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
	one := fr.One()
	for _, v := range []r1cs.Variable{out[17].Bit.V, r1cs.Aux(5000), r1cs.Aux(30000), r1cs.Aux(s.NumAux() - 1)} {
		p := s.Value(v)
		old := *p
		p.Sub(&one, p)
		if s.Satisfied() == nil {
			t.Fatalf("%v flipped: still satisfied", v)
		}
		*p = old
	}
	if err := s.Satisfied(); err != nil {
		t.Fatal(err)
	}
}

// nativeCompress is SHA-256's compression of one 64-byte block.
func nativeCompress(h [8]uint32, block []byte) [8]uint32 {
	var w [64]uint32
	for i := range 16 {
		w[i] = uint32(block[4*i])<<24 | uint32(block[4*i+1])<<16 | uint32(block[4*i+2])<<8 | uint32(block[4*i+3])
	}
	rotr := func(x uint32, n int) uint32 { return x>>n | x<<(32-n) }
	for i := 16; i < 64; i++ {
		s0 := rotr(w[i-15], 7) ^ rotr(w[i-15], 18) ^ w[i-15]>>3
		s1 := rotr(w[i-2], 17) ^ rotr(w[i-2], 19) ^ w[i-2]>>10
		w[i] = w[i-16] + s0 + w[i-7] + s1
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for i := range 64 {
		t1 := hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (e&f ^ ^e&g) + roundConstants[i] + w[i]
		t2 := (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + (a&b ^ a&c ^ b&c)
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	return [8]uint32{h[0] + a, h[1] + b, h[2] + c, h[3] + d, h[4] + e, h[5] + f, h[6] + g, h[7] + hh}
}
