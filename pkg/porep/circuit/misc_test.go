package circuit

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
)

func TestForShapeCompilesOncePerShape(t *testing.T) {
	s, err := porep.ShapeByName(solveShape)
	require.NoError(t, err)
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
		require.Same(t, got[0], c)
	}
	require.Equal(t, solveShape, got[0].Params().Name)

	bad := *s
	bad.Tree.Base = 3
	_, err = ForShape(&bad)
	require.Error(t, err)
}

func TestSetupConfigValidation(t *testing.T) {
	t.Parallel()
	s, err := porep.ShapeByName(solveShape)
	require.NoError(t, err)
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
	_, err = Setup(context.Background(), s, SetupConfig{ParamsPath: filepath.Join(dir, "missing", "p"), VKPath: filepath.Join(dir, "v"), Seed: []byte{1}})
	require.Error(t, err)
	m, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.Empty(t, m)
}

// FuzzAssign feeds mutated C1 documents of the CI shape to the witness
// builder: it must never panic, and every document that parses either yields
// a witness or an ErrInvalidInput naming the problem.
func FuzzAssign(f *testing.F) {
	f.Add(sealedC1(f, solveShape, 21))
	s, err := porep.ShapeByName(solveShape)
	if err != nil {
		f.Fatal(err)
	}
	p, err := ParamsOf(s)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := c1.ParseBytes(doc)
		if err != nil {
			return
		}
		for k := -1; k <= out.Shape.Partitions; k++ {
			_, err := assign(p, out, k)
			if err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("partition %d: %v is not ErrInvalidInput", k, err)
			}
		}
	})
}

// TestSynthesizeConcurrently runs several syntheses of one compiled circuit
// at once (a worker with several slots) and compares them with sequential
// ones.
func TestSynthesizeConcurrently(t *testing.T) {
	s, err := porep.ShapeByName(solveShape)
	require.NoError(t, err)
	c, err := ForShape(s)
	require.NoError(t, err)
	out := parseC1(t, sealedC1(t, solveShape, 8))
	ctx := context.Background()
	want := make([]*groth16.Synthesized, s.Partitions)
	for k := range want {
		want[k], err = c.Synthesize(ctx, out, k)
		require.NoError(t, err)
	}
	got := make([]*groth16.Synthesized, 2*s.Partitions)
	errs := make([]error, len(got))
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], errs[i] = c.Synthesize(ctx, out, i%s.Partitions) })
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		k := i % s.Partitions
		require.Equal(t, want[k].Aux, got[i].Aux, "partition %d", k)
		require.Equal(t, want[k].A, got[i].A, "partition %d", k)
	}
}
