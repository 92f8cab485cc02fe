package stacked

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/c1/c1test"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// lotusC1 reads a C1 output made by Lotus, or skips.
func lotusC1(t testing.TB, name string) *c1.Output { return c1test.Lotus(t, name) }

// sealedC1 seals a random sector of a registered test shape.
func sealedC1(t *testing.T, shape string, seed uint64) *c1.Output {
	t.Helper()
	var buf bytes.Buffer
	if _, err := sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: shape, Seed: seed}, &buf); err != nil {
		t.Fatal(err)
	}
	out, err := c1.ParseBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func synthesizeValues(t *testing.T, c *Circuit) *r1cs.System {
	t.Helper()
	sys := r1cs.NewSystem(r1cs.WithValues())
	if err := c.Synthesize(sys); err != nil {
		t.Fatal(err)
	}
	return sys
}

// satisfied is sys.Satisfied, the failing constraint named (synthesizing
// c again with names: names cost time on every passing run).
func satisfied(t *testing.T, c *Circuit, sys *r1cs.System) error {
	t.Helper()
	if sys.Satisfied() == nil {
		return nil
	}
	named := r1cs.NewSystem(r1cs.WithValues(), r1cs.WithNames())
	if err := c.Synthesize(named); err != nil {
		t.Fatal(err)
	}
	return named.Satisfied()
}

// checkPartitions synthesizes every partition of out with its values: the
// system must be satisfied and its inputs (without ONE) be the public
// inputs the native code computes.
func checkPartitions(t *testing.T, out *c1.Output) {
	t.Helper()
	for k := range out.Shape.Partitions {
		c, err := FromC1(out, k)
		if err != nil {
			t.Fatal(err)
		}
		sys := synthesizeValues(t, c)
		if err := satisfied(t, c, sys); err != nil {
			t.Fatalf("partition %d: %v", k, err)
		}
		st, err := seal.StatementOf(out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := st.PublicInputs(k)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := sys.Values()
		if len(in) != len(want)+1 {
			t.Fatalf("partition %d: %d inputs with ONE, the native computation has %d without", k, len(in), len(want))
		}
		for i := range want {
			if !in[i+1].Equal(&want[i]) {
				t.Fatalf("partition %d: input %d is %s, natively %s", k, i+1, in[i+1].String(), want[i].String())
			}
		}
	}
}

func TestLotusC1Satisfied(t *testing.T) {
	for _, name := range []string{"2KiB.json", "8MiB.json"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "2KiB.json" {
				t.Skip("short: only 2KiB")
			}
			checkPartitions(t, lotusC1(t, name))
		})
	}
}

// TestSealedC1Satisfied proves sectors sealed by pkg/porep/sealer for
// c2cluster's test shapes (fewer label parents, smaller degrees, other
// layer counts and tree arities than the official shapes).
func TestSealedC1Satisfied(t *testing.T) {
	// test-tiny (2 KiB's geometry) and test-sub (tree 8-8-0) are covered by
	// the Lotus 2 KiB C1 and test-top (8-8-2).
	for _, name := range []string{"test-micro", "test-mini", "test-top", "test-11layers"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "test-micro" && name != "test-mini" {
				t.Skip("short: only the smallest shapes")
			}
			checkPartitions(t, sealedC1(t, name, 3))
		})
	}
}

// TestTamperingIsUnsatisfied changes one value a prover controls at a
// time: the circuit must not be satisfied.
func TestTamperingIsUnsatisfied(t *testing.T) {
	out := sealedC1(t, "test-micro", 5)
	bump := func(e *fr.Element) { one := fr.One(); e.Add(e, &one) }
	for k := range out.Shape.Partitions {
		c, err := FromC1(out, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := satisfied(t, c, synthesizeValues(t, c)); err != nil {
			t.Fatalf("untampered partition %d: %v", k, err)
		}
	}
	for _, tc := range []struct {
		name   string
		tamper func(c *Circuit)
	}{
		{"tree D sibling", func(c *Circuit) { bump(&c.Challenges[0].CommDPath.Base[0].Hashes[0]) }},
		{"tree D index", func(c *Circuit) { p := &c.Challenges[0].CommDPath.Base[1]; p.Index ^= 1 }},
		{"data leaf", func(c *Circuit) { bump(&c.Challenges[0].DataLeaf) }},
		{"drg parent label", func(c *Circuit) { bump(&c.Challenges[0].DRGParents[0].Rows[1]) }},
		{"exp parent label", func(c *Circuit) { bump(&c.Challenges[0].ExpParents[0].Rows[0]) }},
		{"parent tree C sibling", func(c *Circuit) { bump(&c.Challenges[0].DRGParents[1].Path.Base[0].Hashes[2]) }},
		{"tree R_last sibling", func(c *Circuit) { bump(&c.Challenges[0].CommRLastPath.Base[0].Hashes[0]) }},
		{"tree C sibling", func(c *Circuit) { bump(&c.Challenges[0].CommCPath.Base[0].Hashes[1]) }},
		{"challenged node", func(c *Circuit) { c.Challenges[0].Node ^= 1 }},
		{"comm_c", func(c *Circuit) { bump(&c.CommC) }},
		{"comm_r_last", func(c *Circuit) { bump(&c.CommRLast) }},
		{"comm_d", func(c *Circuit) { bump(&c.CommD) }},
		{"replica id", func(c *Circuit) { bump(&c.ReplicaID) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromC1(out, 1)
			if err != nil {
				t.Fatal(err)
			}
			tc.tamper(c)
			err = synthesizeValues(t, c).Satisfied()
			var u *r1cs.Unsatisfied
			if !errors.As(err, &u) {
				t.Fatalf("tampered circuit: %v, want unsatisfied", err)
			}
		})
	}
	// In the document: a tree D sibling of partition 1 (what
	// poreptest.TamperPath does).
	out.VanillaProofs.Partitions()[1][0].CommDProofs.Data.Single.Path.Path[0].Hashes[0][0] ^= 1
	c, err := FromC1(out, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := synthesizeValues(t, c).Satisfied(); err == nil {
		t.Fatal("a tampered C1 satisfies the circuit")
	}
}

func TestFromC1Errors(t *testing.T) {
	out := sealedC1(t, "test-tiny", 9)
	for _, tc := range []struct {
		name   string
		edit   func(o *c1.Output)
		k      int
		substr string
	}{
		{"partition", func(*c1.Output) {}, 2, "partition 2"},
		{"rows", func(o *c1.Output) {
			p := &o.VanillaProofs.Partitions()[0][0].ReplicaColumnProofs.ExpParents[0].Column
			p.Rows = p.Rows[:1]
		}, 0, "vanilla_proofs.C2ClusterTest[0][0].replica_column_proofs.exp_parents[0].column.rows"},
		{"not canonical", func(o *c1.Output) {
			for i := range o.CommR {
				o.CommR[i] = 0xff
			}
		}, 0, "comm_r"},
		{"comm_c", func(o *c1.Output) {
			o.VanillaProofs.Partitions()[1][1].ReplicaColumnProofs.CX.InclusionProof.Data.Single.Root[0] ^= 1
		}, 1, "vanilla_proofs.C2ClusterTest[1][1].replica_column_proofs.c_x.inclusion_proof.root: inconsistent comm_c"},
		{"comm_r_last", func(o *c1.Output) {
			o.VanillaProofs.Partitions()[0][1].CommRLastProof.Data.Single.Root[3] ^= 1
		}, 0, "inconsistent comm_r_last"},
		{"drg parents", func(o *c1.Output) {
			rc := &o.VanillaProofs.Partitions()[0][0].ReplicaColumnProofs
			rc.DrgParents = rc.DrgParents[:1]
		}, 0, "drg_parents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := sealedC1(t, "test-tiny", 9)
			tc.edit(o)
			_, err := FromC1(o, tc.k)
			if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tc.substr) {
				t.Fatalf("got %v, want an ErrShape naming %q", err, tc.substr)
			}
		})
	}
	if _, err := FromC1(out, 0); err != nil {
		t.Fatal(err)
	}
}
