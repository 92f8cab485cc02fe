package stacked

import (
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// TestChallengesIndependent generates the witness of a two-challenge
// partition as the fast synthesizer does: the head on one witness, each
// challenge concurrently on its own witness writing into one assignment
// from the variables it starts at (the head's counts plus i times one
// challenge's). The assignment must equal the recorded system's values,
// and every challenge must allocate the same counts.
func TestChallengesIndependent(t *testing.T) {
	for _, name := range []string{"test-micro", "test-mini"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "test-micro" {
				t.Skip("short: only test-micro")
			}
			c := allChallenges(t, sealedC1(t, name, 11))
			sys := synthesizeValues(t, c)
			if err := satisfied(t, c, sys); err != nil {
				t.Fatal(err)
			}
			wantIn, wantAux := sys.Values()

			hc := newCounter()
			hcount, err := c.Head(hc)
			if err != nil {
				t.Fatal(err)
			}
			var chal *counter
			for i := range c.Challenges {
				cc := &counter{}
				if err := c.Challenge(cc, hcount, i); err != nil {
					t.Fatal(err)
				}
				if chal != nil && *cc != *chal {
					t.Fatalf("challenge %d allocates %+v, challenge 0 %+v", i, *cc, *chal)
				}
				chal = cc
			}

			in := make([]fr.Element, len(wantIn))
			aux := make([]fr.Element, len(wantAux))
			hw := r1cs.NewWitnessAt(in, aux, 0, 0)
			hw.AllocInput(r1cs.N("ONE"), fr.One())
			h, err := c.Head(hw)
			if err != nil {
				t.Fatal(err)
			}
			if hw.NumInputs() != hc.in || hw.NumAux() != hc.aux {
				t.Fatalf("head witness %d inputs %d aux, counted %d %d", hw.NumInputs(), hw.NumAux(), hc.in, hc.aux)
			}
			var wg sync.WaitGroup
			errs := make([]error, len(c.Challenges))
			for i := range c.Challenges {
				w := r1cs.NewWitnessAt(in, aux, hc.in+i*chal.in, hc.aux+i*chal.aux)
				wg.Go(func() { errs[i] = c.Challenge(w, h, i) })
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			for i := range wantIn {
				if !in[i].Equal(&wantIn[i]) {
					t.Fatalf("input %d differs", i)
				}
			}
			for i := range wantAux {
				if !aux[i].Equal(&wantAux[i]) {
					t.Fatalf("aux %d differs", i)
				}
			}
		})
	}
}

// allChallenges is one circuit with the challenges of every partition of
// out (a shape with one partition of them all): a sector's partitions
// share the head's values, so it is satisfied too.
func allChallenges(t *testing.T, out *c1.Output) *Circuit {
	t.Helper()
	s := *out.Shape
	s.Partitions, s.ChallengesPerPartition = 1, out.Shape.TotalChallenges()
	var all *Circuit
	for k := range out.Shape.Partitions {
		c, err := FromC1(out, k)
		if err != nil {
			t.Fatal(err)
		}
		if all == nil {
			all = c
			all.Shape = &s
			continue
		}
		all.Challenges = append(all.Challenges, c.Challenges...)
	}
	return all
}

// BenchmarkWitness2KiB generates the witness of the Lotus 2 KiB partition
// (r1cs.Witness, no constraints).
func BenchmarkWitness2KiB(b *testing.B) {
	out := lotusC1(b, "2KiB.json")
	c, err := FromC1(out, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		w := r1cs.NewWitness()
		if err := c.Synthesize(w); err != nil {
			b.Fatal(err)
		}
	}
}

// counter is a CS that only counts: inputs (ONE included), aux and
// constraints. It says it records constraints, so gadgets build and
// enforce every one.
type counter struct{ in, aux, rows int }

func newCounter() *counter { return &counter{in: 1} }

func (c *counter) Alloc(r1cs.Name, fr.Element) r1cs.Variable {
	c.aux++
	return r1cs.Aux(c.aux - 1)
}

func (c *counter) AllocInput(r1cs.Name, fr.Element) r1cs.Variable {
	c.in++
	return r1cs.Input(c.in - 1)
}

func (c *counter) Enforce(r1cs.Name, *r1cs.LC, *r1cs.LC, *r1cs.LC) { c.rows++ }
func (c *counter) Push(r1cs.Name)                                  {}
func (c *counter) Pop()                                            {}
func (c *counter) Constraints() bool                               { return true }
