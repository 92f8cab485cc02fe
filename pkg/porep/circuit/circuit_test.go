package circuit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/porep/verifier"
)

// Test shapes: proveShape is set up and proved end to end in CI, the
// smallest shape with several partitions; solveShape, with official tree
// arity 8, a 6-level tree D and expander parents in its labels, is
// synthesized only.
const (
	proveShape = "test-micro"
	solveShape = "test-mini"
)

func mustShape(t testing.TB, name string) *porep.Shape {
	t.Helper()
	s, err := porep.ShapeByName(name)
	require.NoError(t, err)
	return s
}

// sealedC1 seals a random sector of the shape and returns its C1 JSON.
func sealedC1(t testing.TB, shape string, seed uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: shape, Seed: seed}, &buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// parseC1 parses C1 JSON as a worker does (a fresh copy every call).
func parseC1(t testing.TB, doc []byte) *c1.Output {
	t.Helper()
	out, err := c1.ParseBytes(doc)
	require.NoError(t, err)
	return out
}

func mustPublic(t testing.TB, out *c1.Output, k int) []fr.Element {
	t.Helper()
	in, err := PublicInputs(out, k)
	require.NoError(t, err)
	return in
}

// TestProveVerifyEveryPartition seals a test sector with several partitions,
// runs the setup library (parameter files written and read back), then for
// every partition synthesizes the circuit from the parsed C1, proves it with
// the CPU backend and verifies the proof with the Groth16 verifier against
// the natively computed public inputs.
func TestProveVerifyEveryPartition(t *testing.T) {
	ctx := context.Background()
	doc := sealedC1(t, proveShape, 11)
	out := parseC1(t, doc)
	require.GreaterOrEqual(t, out.Shape.Partitions, 2)

	dir := t.TempDir()
	var progress strings.Builder
	cfg := SetupConfig{
		ParamsPath:      filepath.Join(dir, "p.params"),
		VKPath:          filepath.Join(dir, "p.vk"),
		Seed:            []byte("circuit e2e test"),
		Progress:        groth16.ProgressLines(&progress),
		FingerprintPath: FingerprintPath(dir, proveShape),
	}
	start := time.Now()
	written, err := Setup(ctx, out.Shape, cfg)
	require.NoError(t, err)
	t.Logf("setup (record, groth16 setup, write): %v", time.Since(start))
	require.Contains(t, progress.String(), "circuit: write parameters 100%")

	pk, err := groth16.ReadParams(cfg.ParamsPath, groth16.SkipSubgroupCheck())
	require.NoError(t, err)
	require.Equal(t, written.VK, pk.VK)
	require.Equal(t, len(written.H), len(pk.H))
	require.Equal(t, len(written.BG2), len(pk.BG2))
	f, err := os.Open(cfg.VKPath)
	require.NoError(t, err)
	vk, err := groth16.ReadVerifyingKey(f)
	require.NoError(t, f.Close())
	require.NoError(t, err)
	require.Equal(t, written.VK, *vk)
	require.Len(t, vk.IC, 1+len(mustPublic(t, out, 0)))

	c, err := ForShape(out.Shape)
	require.NoError(t, err)
	// bellperson's layout: |H| = domain − 1, |L| = aux, |A| = inputs +
	// A density, |B| = B densities.
	st := c.Stats()
	require.Len(t, pk.H, st.Domain-1)
	require.Len(t, pk.L, st.Aux)
	require.Len(t, pk.A, st.Inputs+st.ADensity)
	require.Len(t, pk.BG1, st.BDensityInput+st.BDensityAux)
	require.Len(t, pk.BG2, st.BDensityInput+st.BDensityAux)
	// The fingerprint written beside the parameters is the circuit's.
	require.NoError(t, c.CheckFingerprint(ctx, cfg.FingerprintPath))
	key, err := groth16.NewCPUBackend().Load(ctx, pk)
	require.NoError(t, err)
	defer key.Close()

	proofs := make([][]byte, out.Shape.Partitions)
	inputs := make([][]fr.Element, out.Shape.Partitions)
	for k := range proofs {
		start := time.Now()
		w, err := c.Synthesize(ctx, out, k)
		require.NoError(t, err, "partition %d", k)
		synth := time.Since(start)
		inputs[k] = mustPublic(t, out, k)
		require.Equal(t, inputs[k], w.Input[1:], "partition %d: the circuit's inputs vs the native public inputs", k)
		rnd, err := groth16.NewRandomness()
		require.NoError(t, err)
		start = time.Now()
		proof, _, err := groth16.Prove(ctx, key, w, rnd)
		require.NoError(t, err, "partition %d", k)
		t.Logf("partition %d: synthesize %v, prove %v", k, synth, time.Since(start))
		proofs[k], err = proof.MarshalBinary()
		require.NoError(t, err)
	}
	for k := range proofs {
		var p groth16.Proof
		require.NoError(t, p.UnmarshalBinary(proofs[k]))
		require.NoError(t, groth16.Verify(vk, &p, inputs[k]), "partition %d", k)
		// A partition's proof does not verify against another's inputs.
		require.Error(t, groth16.Verify(vk, &p, inputs[(k+1)%len(inputs)]), "partition %d with the inputs of the next", k)
	}
}

// TestTamperedC1IsUnsatisfied changes one value of a valid C1 at a time: the
// native verifier names the failed check, and the circuit is unsatisfied
// and names the constraint's namespace.
func TestTamperedC1IsUnsatisfied(t *testing.T) {
	ctx := context.Background()
	doc := sealedC1(t, solveShape, 12)
	shape := mustShape(t, solveShape)
	c, err := ForShape(shape)
	require.NoError(t, err)

	valid := parseC1(t, doc)
	require.NoError(t, verifier.Verify(ctx, valid, verifier.Options{}))
	for k := range shape.Partitions {
		w, err := c.Synthesize(ctx, valid, k)
		require.NoError(t, err, "partition %d", k)
		require.Equal(t, mustPublic(t, valid, k), w.Input[1:], "partition %d", k)
	}

	first := func(out *c1.Output) *c1.ChallengeProof { return &out.VanillaProofs.Partitions()[0][0] }
	cases := []struct {
		name   string
		tamper func(t *testing.T, out *c1.Output)
	}{
		{"a label (parent column row)", func(_ *testing.T, out *c1.Output) {
			first(out).ReplicaColumnProofs.DrgParents[0].Column.Rows[1][3] ^= 1
		}},
		{"a tree D path hash", func(_ *testing.T, out *c1.Output) {
			first(out).CommDProofs.Data.Single.Path.Path[2].Hashes[0][0] ^= 1
		}},
		{"a tree C path hash", func(_ *testing.T, out *c1.Output) {
			first(out).ReplicaColumnProofs.ExpParents[1].InclusionProof.Data.Single.Path.Path[0].Hashes[3][7] ^= 1
		}},
		{"the data leaf", func(_ *testing.T, out *c1.Output) {
			first(out).CommDProofs.Data.Single.Leaf[4] ^= 1
		}},
		{"comm_r", func(_ *testing.T, out *c1.Output) { out.CommR[0] ^= 1 }},
		{"the replica id", func(_ *testing.T, out *c1.Output) { out.ReplicaID[0] ^= 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := parseC1(t, doc)
			tc.tamper(t, out)
			var verr *verifier.Error
			err := verifier.Verify(ctx, out, verifier.Options{})
			require.ErrorAs(t, err, &verr, "the native verifier rejects it")
			_, err = c.Synthesize(ctx, out, 0)
			require.ErrorIs(t, err, ErrUnsatisfied)
			require.NotErrorIs(t, err, ErrInvalidInput)
			require.ErrorContains(t, err, ": stacked drgporep")
			t.Logf("%v", err)
		})
	}
	// Another partition's proofs in partition 0: satisfied, but the
	// circuit's inputs are not partition 0's public inputs.
	out := parseC1(t, doc)
	parts := out.VanillaProofs.Partitions()
	parts[0], parts[1] = parts[1], parts[0]
	w, err := c.Synthesize(ctx, out, 0)
	require.NoError(t, err)
	require.NotEqual(t, mustPublic(t, out, 0), w.Input[1:])
}

// TestSynthesizeRejectsMisfits checks the errors for C1 outputs that do not
// fit the compiled circuit (nothing is synthesized).
func TestSynthesizeRejectsMisfits(t *testing.T) {
	ctx := context.Background()
	doc := sealedC1(t, solveShape, 13)
	shape := mustShape(t, solveShape)
	c, err := ForShape(shape)
	require.NoError(t, err)

	out := parseC1(t, doc)
	_, err = c.Synthesize(ctx, out, shape.Partitions)
	require.ErrorIs(t, err, ErrInvalidInput)
	require.ErrorContains(t, err, "partition 3 outside 0..2")
	_, err = c.Synthesize(ctx, out, -1)
	require.ErrorIs(t, err, ErrInvalidInput)

	// A path hash that is not a field element.
	out = parseC1(t, doc)
	h := &out.VanillaProofs.Partitions()[1][0].CommRLastProof.Data.Single.Path.Path[0].Hashes[2]
	for i := range h {
		h[i] = 0xff
	}
	_, err = c.Synthesize(ctx, out, 1)
	require.ErrorIs(t, err, ErrInvalidInput)
	require.ErrorContains(t, err, "comm_r_last_proof")

	// A C1 output of another shape.
	other := parseC1(t, sealedC1(t, "test-tiny", 1))
	_, err = c.Synthesize(ctx, other, 0)
	require.ErrorIs(t, err, ErrInvalidInput)
	require.ErrorContains(t, err, "shape test-tiny")

	// A cancelled context stops before any work.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Synthesize(cctx, parseC1(t, doc), 0)
	require.ErrorIs(t, err, context.Canceled)
}

// FuzzSynthesize feeds mutated C1 documents of the CI shape to Synthesize:
// it never panics, and a document that parses either synthesizes or fails
// with ErrInvalidInput or ErrUnsatisfied.
func FuzzSynthesize(f *testing.F) {
	f.Add(sealedC1(f, proveShape, 21))
	c, err := ForShape(mustShape(f, proveShape))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := c1.ParseBytes(doc)
		if err != nil {
			return
		}
		for k := -1; k <= out.Shape.Partitions; k++ {
			_, err := c.Synthesize(context.Background(), out, k)
			if err != nil && !errors.Is(err, ErrInvalidInput) && !errors.Is(err, ErrUnsatisfied) {
				t.Fatalf("partition %d: %v is neither ErrInvalidInput nor ErrUnsatisfied", k, err)
			}
		}
	})
}

func TestForShapeCompilesOncePerGeometry(t *testing.T) {
	s := mustShape(t, solveShape)
	got := make([]*Compiled, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			c, err := ForShape(s)
			require.NoError(t, err)
			got[i] = c
		})
	}
	wg.Wait()
	for _, c := range got {
		require.Same(t, got[0].Template(), c.Template())
	}
	require.Equal(t, solveShape, got[0].Shape().Name)
	// test-tiny and 2KiB differ only in name and porep id: one recording.
	tiny, err := ForShape(mustShape(t, "test-tiny"))
	require.NoError(t, err)
	kib, err := ForShape(mustShape(t, "2KiB"))
	require.NoError(t, err)
	require.Same(t, tiny.Template(), kib.Template())
	require.Equal(t, "2KiB", kib.Shape().Name)

	bad := *s
	bad.Tree.Base = 3
	_, err = ForShape(&bad)
	require.Error(t, err)
}

func TestSetupConfigValidation(t *testing.T) {
	t.Parallel()
	s := mustShape(t, solveShape)
	dir := t.TempDir()
	for _, tc := range []struct {
		cfg  SetupConfig
		want string
	}{
		{SetupConfig{VKPath: filepath.Join(dir, "v")}, "ParamsPath is empty"},
		{SetupConfig{ParamsPath: filepath.Join(dir, "p")}, "VKPath is empty"},
		{SetupConfig{ParamsPath: filepath.Join(dir, "p"), VKPath: filepath.Join(dir, ".", "p")}, "are the same file"},
	} {
		_, err := Setup(context.Background(), s, tc.cfg)
		require.ErrorContains(t, err, tc.want)
	}
	// An unwritable destination fails before any file is left behind.
	_, err := Setup(context.Background(), s, SetupConfig{ParamsPath: filepath.Join(dir, "missing", "p"), VKPath: filepath.Join(dir, "v"), Seed: []byte{1}})
	require.Error(t, err)
	m, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.Empty(t, m)
}

// TestFingerprint: the fingerprint file names the circuit's R1CS hash; a
// file naming another is ErrStaleParams, a missing one the os error.
func TestFingerprint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := ForShape(mustShape(t, proveShape))
	require.NoError(t, err)
	p := FingerprintPath(dir, proveShape)
	require.ErrorIs(t, c.CheckFingerprint(ctx, p), os.ErrNotExist)
	require.NoError(t, c.WriteFingerprint(ctx, p))
	require.NoError(t, c.CheckFingerprint(ctx, p))
	h, err := c.Hash(ctx, nil)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, h+" "+proveShape+"\n", string(b))
	other, err := ForShape(mustShape(t, solveShape))
	require.NoError(t, err)
	require.ErrorIs(t, other.CheckFingerprint(ctx, p), ErrStaleParams)
}
