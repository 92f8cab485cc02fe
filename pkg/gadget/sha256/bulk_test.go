package sha256

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/gadget/boolean"
	u32 "github.com/c2cluster/c2cluster/pkg/gadget/uint32"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// noBulk hides a CS's r1cs.Bulk, forcing the gadget path.
type noBulk struct{ r1cs.CS }

// bitMix chooses how an input or state bit is given.
type bitMix int

const (
	allAllocated bitMix = iota // Is
	mixedKinds                 // Is, Not or Constant at random
	allConstant
)

// makeBits gives n random bits in cs, as mix says, with a
// deterministic generator so that two runs build the same thing.
func makeBits(cs r1cs.CS, rng *rand.Rand, n int, mix bitMix) []boolean.Boolean {
	out := make([]boolean.Boolean, n)
	for i := range out {
		v := rng.IntN(2) == 1
		kind := 0
		switch mix {
		case mixedKinds:
			kind = rng.IntN(3)
		case allConstant:
			kind = 2
		}
		switch kind {
		case 0:
			out[i] = boolean.Is(boolean.AllocBit(cs, v))
		case 1:
			out[i] = boolean.Is(boolean.AllocBit(cs, !v)).Not()
		default:
			out[i] = boolean.Constant(v)
		}
	}
	return out
}

type compressCase struct {
	name       string
	input      bitMix
	state      bitMix // allConstant: the IV
	paddedTail bool   // the input's last 65+ bits are padding constants
}

var compressCases = []compressCase{
	{"allocated input, IV", allAllocated, allConstant, false},
	{"allocated input and state", allAllocated, allAllocated, false},
	{"padding block on an allocated state", allConstant, allAllocated, false},
	{"message end and padding, allocated state", allAllocated, allAllocated, true},
	{"mixed input, IV", mixedKinds, allConstant, false},
	{"mixed input, mixed state", mixedKinds, mixedKinds, false},
	{"mixed input and state, padding", mixedKinds, mixedKinds, true},
	{"constant input, IV", allConstant, allConstant, false},
}

// build runs the compression of one case in cs.
func build(cs r1cs.CS, seed uint64, c compressCase) []u32.UInt32 {
	rng := rand.New(rand.NewPCG(seed, 99))
	input := makeBits(cs, rng, 512, c.input)
	if c.paddedTail {
		tail := Pad(input[:384])
		input = tail[:512]
	}
	state := IV()
	if c.state != allConstant {
		for i := range state {
			state[i] = u32.FromBits(makeBits(cs, rng, 32, c.state))
		}
	}
	return Compress(cs, input, state)
}

func sameWitness(t *testing.T, name string, gen, fast *r1cs.Witness, genOut, fastOut []u32.UInt32) {
	t.Helper()
	if gen.NumAux() != fast.NumAux() || len(gen.Aux) != len(fast.Aux) {
		t.Fatalf("%s: gadget path %d aux, native %d", name, gen.NumAux(), fast.NumAux())
	}
	for i := range gen.Aux {
		if !gen.Aux[i].Equal(&fast.Aux[i]) {
			t.Fatalf("%s: aux %d differs (gadget %s, native %s)", name, i, gen.Aux[i].String(), fast.Aux[i].String())
		}
	}
	if len(genOut) != len(fastOut) {
		t.Fatalf("%s: %d and %d words", name, len(genOut), len(fastOut))
	}
	for i := range genOut {
		if genOut[i] != fastOut[i] {
			for j := range genOut[i].Bits {
				if genOut[i].Bits[j] != fastOut[i].Bits[j] {
					t.Fatalf("%s: word %d bit %d: gadget %+v, native %+v", name, i, j, genOut[i].Bits[j], fastOut[i].Bits[j])
				}
			}
			t.Fatalf("%s: word %d value %08x, native %08x", name, i, genOut[i].Val, fastOut[i].Val)
		}
	}
}

// TestCompressNativeMatchesGadget: for random inputs and states of every
// form (allocated, negated and constant bits, the IV, padding), the native
// path writes the same aux values as the gadget path and returns the same
// words; and those values satisfy the recorded circuit.
func TestCompressNativeMatchesGadget(t *testing.T) {
	for k, c := range compressCases {
		for seed := range uint64(3) {
			seed := seed + 10*uint64(k)
			gen, fast := r1cs.NewWitness(), r1cs.NewWitness()
			genOut := build(noBulk{gen}, seed, c)
			fastOut := build(fast, seed, c)
			sameWitness(t, c.name, gen, fast, genOut, fastOut)

			if seed%3 == 0 {
				s := r1cs.NewSystem(r1cs.WithValues())
				sysOut := build(s, seed, c)
				_, aux := s.Values()
				if len(aux) != len(fast.Aux) {
					t.Fatalf("%s: the system has %d aux, the witness %d", c.name, len(aux), len(fast.Aux))
				}
				for i := range aux {
					if !aux[i].Equal(&fast.Aux[i]) {
						t.Fatalf("%s: aux %d: system %s, native %s", c.name, i, aux[i].String(), fast.Aux[i].String())
					}
				}
				for i := range sysOut {
					if sysOut[i] != fastOut[i] {
						t.Fatalf("%s: word %d differs from the system's", c.name, i)
					}
				}
				if err := s.Satisfied(); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}
		}
	}
}

// TestHashNativeMatchesGadget: whole hashes (two and three blocks, the
// last all padding) through both paths.
func TestHashNativeMatchesGadget(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 32, 64, 100, 128} {
		msg := randomBytes(rng, n)
		gen, fast := r1cs.NewWitness(), r1cs.NewWitness()
		genBits := Hash(noBulk{gen}, allocInput(noBulk{gen}, msg))
		fastBits := Hash(fast, allocInput(fast, msg))
		genOut := []u32.UInt32{u32.FromBitsBE(genBits[:32])}
		fastOut := []u32.UInt32{u32.FromBitsBE(fastBits[:32])}
		sameWitness(t, "hash", gen, fast, genOut, fastOut)
		for i := range genBits {
			if genBits[i] != fastBits[i] {
				t.Fatalf("%d bytes: digest bit %d differs", n, i)
			}
		}
	}
}

// TestWitnessAtFixedBuffer: the native path writes into a caller's buffer
// at an offset (NewWitnessAt), as the partition synthesizer runs it.
func TestWitnessAtFixedBuffer(t *testing.T) {
	gen := r1cs.NewWitness()
	c := compressCases[1]
	genOut := build(noBulk{gen}, 5, c)

	const off = 7
	aux := make([]fr.Element, off+gen.NumAux())
	fast := r1cs.NewWitnessAt(make([]fr.Element, 1), aux, 1, off)
	fastOut := build(fast, 5, c)
	for i := range gen.Aux {
		if !gen.Aux[i].Equal(&aux[off+i]) {
			t.Fatalf("aux %d differs", i)
		}
	}
	for i := range genOut {
		for j := range genOut[i].Bits {
			g, f := genOut[i].Bits[j], fastOut[i].Bits[j]
			if g.Kind != f.Kind || g.Value() != f.Value() || g.Kind != boolean.KindConstant && f.Bit.V != g.Bit.V+off {
				t.Fatalf("word %d bit %d: %+v and %+v", i, j, g, f)
			}
		}
	}
}

func benchmarkCompress(b *testing.B, bulk bool, c compressCase) {
	rng := rand.New(rand.NewPCG(1, 1))
	w := r1cs.NewWitness()
	var cs r1cs.CS = w
	if !bulk {
		cs = noBulk{w}
	}
	input := makeBits(cs, rng, 512, c.input)
	state := IV()
	if c.state != allConstant {
		for i := range state {
			state[i] = u32.FromBits(makeBits(cs, rng, 32, c.state))
		}
	}
	start := w.NumAux()
	out := Compress(cs, input, state)
	n := w.NumAux() - start
	aux := make([]fr.Element, w.NumAux())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		// Rewrite the same variables in place, as a partition does.
		ww := r1cs.NewWitnessAt(make([]fr.Element, 1), aux, 1, start)
		cs = ww
		if !bulk {
			cs = noBulk{ww}
		}
		out = Compress(cs, input, state)
	}
	b.StopTimer()
	_ = out
	b.ReportMetric(float64(n), "aux/op")
}

func BenchmarkCompressNative(b *testing.B) {
	b.Run("state", func(b *testing.B) { benchmarkCompress(b, true, compressCases[1]) })
	b.Run("IV", func(b *testing.B) { benchmarkCompress(b, true, compressCases[0]) })
	b.Run("padding", func(b *testing.B) { benchmarkCompress(b, true, compressCases[2]) })
}

func BenchmarkCompressGadget(b *testing.B) {
	b.Run("state", func(b *testing.B) { benchmarkCompress(b, false, compressCases[1]) })
	b.Run("IV", func(b *testing.B) { benchmarkCompress(b, false, compressCases[0]) })
	b.Run("padding", func(b *testing.B) { benchmarkCompress(b, false, compressCases[2]) })
}

// BenchmarkCompressSystem records compressions into one System, as a
// whole circuit is recorded.
func BenchmarkCompressSystem(b *testing.B) {
	s := r1cs.NewSystem()
	rng := rand.New(rand.NewPCG(1, 1))
	input := makeBits(s, rng, 512, allAllocated)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		Compress(s, input, IV())
	}
}
