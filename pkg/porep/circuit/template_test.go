package circuit

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

func withFrontend() Option { return func(o *options) { o.frontend = true } }
func withKeepB() Option    { return func(o *options) { o.keepB = true } }

// TestAssembledEqualsFrontend checks that the partition system Compile
// assembles from its two templates is the one gnark's frontend compiles from
// the whole circuit: the same instructions, calldata (wire ids and
// coefficient ids), coefficient table, wire counts and names, hint
// registrations and solver levels (so it solves as parallel as the
// frontend's), before and after balanceB.
func TestAssembledEqualsFrontend(t *testing.T) {
	shapes := []Params{
		mustParams(t, proveShape),
		// Base, sub and top tree levels, 3 layers, 2 DRG and 1 expander
		// parents, 3 challenges.
		{Name: "assembly-check", Nodes: 8, Layers: 3, DRGDegree: 2, ExpDegree: 1, LabelParents: 3, Challenges: 3,
			Tree: TreeArity{Base: 2, Sub: 2, Top: 2}},
	}
	if !testing.Short() {
		shapes = append(shapes, mustParams(t, solveShape))
	}
	for _, p := range shapes {
		t.Run(p.Name, func(t *testing.T) {
			var stages []int64
			asm, err := Compile(p, withKeepB(), WithProgress(func(stage string, done, total int64) {
				require.Equal(t, "circuit: compile "+p.Name, stage)
				require.Equal(t, int64(p.Challenges+2), total)
				stages = append(stages, done)
			}))
			require.NoError(t, err)
			require.Len(t, stages, p.Challenges+3, "start, templates, every challenge, end")
			fe, err := Compile(p, withKeepB(), withFrontend())
			require.NoError(t, err)
			requireSameSystem(t, fe.Circuit().R1CS(), asm.Circuit().R1CS())

			// balanceB is a function of the system: applied to equal
			// systems it turns the same constraints.
			require.Equal(t, balanceB(fe.Circuit().R1CS()), balanceB(asm.Circuit().R1CS()))
			requireSameSystem(t, fe.Circuit().R1CS(), asm.Circuit().R1CS())
			balanced, err := Compile(p)
			require.NoError(t, err)
			feBalanced, err := Compile(p, withFrontend())
			require.NoError(t, err)
			require.Equal(t, feBalanced.Stats(), balanced.Stats())
			requireSameSystem(t, feBalanced.Circuit().R1CS(), balanced.Circuit().R1CS())
			t.Logf("%+v", balanced.Stats())
		})
	}
}

// requireSameSystem compares every field of two systems that the solver,
// the Groth16 setup and the prover read.
func requireSameSystem(t *testing.T, want, got *cs.R1CS) {
	t.Helper()
	require.Equal(t, want.Public, got.Public, "public inputs")
	require.Equal(t, want.Secret, got.Secret, "secret inputs")
	require.Equal(t, want.NbInternalVariables, got.NbInternalVariables, "internal wires")
	require.Equal(t, want.NbConstraints, got.NbConstraints, "constraints")
	require.Equal(t, len(want.Blueprints), len(got.Blueprints), "blueprints")
	for i := range want.Blueprints {
		require.Equal(t, reflect.TypeOf(want.Blueprints[i]), reflect.TypeOf(got.Blueprints[i]), "blueprint %d", i)
	}
	require.Equal(t, want.Coefficients, got.Coefficients, "coefficient table")
	require.Equal(t, want.MHintsDependencies, got.MHintsDependencies, "hints")
	require.Equal(t, len(want.Instructions), len(got.Instructions), "instructions")
	for i := range want.Instructions {
		if want.Instructions[i] != got.Instructions[i] {
			require.Equal(t, want.Instructions[i], got.Instructions[i], "instruction %d", i)
		}
	}
	require.True(t, slicesEqual(want.CallData, got.CallData), "calldata")
	require.Equal(t, len(want.Levels), len(got.Levels), "solver levels")
	for l := range want.Levels {
		require.True(t, slicesEqual(want.Levels[l], got.Levels[l]), "solver level %d", l)
	}
	require.Equal(t, want.CommitmentInfo, got.CommitmentInfo)
	require.Equal(t, want.Logs, got.Logs)
	require.Equal(t, len(want.DebugInfo), len(got.DebugInfo))
}

func slicesEqual(a, b []uint32) bool { return reflect.DeepEqual(a, b) }

// TestAssembledSolvesLikeFrontend solves the assembled and the
// frontend-compiled circuits of test-micro on the same honest witness: every
// wire and every A, B, C evaluation agree; a tampered witness is rejected by
// the assembled one.
func TestAssembledSolvesLikeFrontend(t *testing.T) {
	p := mustParams(t, proveShape)
	asm, err := Compile(p)
	require.NoError(t, err)
	fe, err := Compile(p, withFrontend())
	require.NoError(t, err)
	out := parseC1(t, sealedC1(t, proveShape, 31))
	ctx := context.Background()
	for k := range out.Shape.Partitions {
		wa, err := asm.Synthesize(ctx, out, k)
		require.NoError(t, err)
		wf, err := fe.Synthesize(ctx, out, k)
		require.NoError(t, err)
		require.Equal(t, wf.Input, wa.Input, "partition %d", k)
		require.Equal(t, wf.Aux, wa.Aux, "partition %d", k)
		require.Equal(t, wf.A, wa.A, "partition %d", k)
		require.Equal(t, wf.B, wa.B, "partition %d", k)
		require.Equal(t, wf.C, wa.C, "partition %d", k)
		require.Equal(t, wf.ADensityAux, wa.ADensityAux)
		require.Equal(t, wf.BDensityAux, wa.BDensityAux)
		require.Equal(t, wf.BDensityInput, wa.BDensityInput)
	}
	// The last challenge's tree-C path: assembled from the template with
	// the last challenge's wires.
	last := out.VanillaProofs.Partitions()[1]
	last[len(last)-1].ReplicaColumnProofs.CX.InclusionProof.Data.Single.Path.Path[0].Hashes[0][5] ^= 1
	_, err = asm.Synthesize(ctx, out, 1)
	require.ErrorIs(t, err, ErrUnsatisfied)
}

func mustParams(t testing.TB, shape string) Params {
	t.Helper()
	s, err := porep.ShapeByName(shape)
	require.NoError(t, err)
	p, err := ParamsOf(s)
	require.NoError(t, err)
	return p
}

// TestFingerprint: the fingerprint is a function of the matrices. The
// assembled and the frontend-compiled circuits (the same system) share it;
// the unbalanced matrices of the same circuit and another shape's do not.
// CheckFingerprint accepts the file WriteFingerprint wrote, and names a
// stale or missing one.
func TestFingerprint(t *testing.T) {
	p := mustParams(t, proveShape)
	asm, err := Compile(p)
	require.NoError(t, err)
	fe, err := Compile(p, withFrontend())
	require.NoError(t, err)
	plain, err := Compile(p, withKeepB())
	require.NoError(t, err)
	other, err := Compile(Params{Name: "assembly-check", Nodes: 8, Layers: 3, DRGDegree: 2, ExpDegree: 1, LabelParents: 3, Challenges: 2,
		Tree: TreeArity{Base: 2, Sub: 2, Top: 2}})
	require.NoError(t, err)
	require.Len(t, asm.Fingerprint(), 64)
	require.Equal(t, fe.Fingerprint(), asm.Fingerprint())
	require.NotEqual(t, plain.Fingerprint(), asm.Fingerprint())
	require.NotEqual(t, other.Fingerprint(), asm.Fingerprint())

	dir := t.TempDir()
	path := FingerprintPath(dir, p.Name)
	require.ErrorIs(t, asm.CheckFingerprint(path), fs.ErrNotExist)
	require.NoError(t, plain.WriteFingerprint(path))
	err = asm.CheckFingerprint(path)
	require.ErrorIs(t, err, ErrStaleParams)
	require.ErrorContains(t, err, path)
	require.NoError(t, asm.WriteFingerprint(path))
	require.NoError(t, asm.CheckFingerprint(path))
	require.NoError(t, fe.CheckFingerprint(path))
	m, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.Equal(t, []string{path}, m, "no temporary file left")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, asm.Fingerprint()+" "+p.Name+"\n", string(b))
}
