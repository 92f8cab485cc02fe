package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// TestCircuitCommand: `coordinator circuit` prints the circuit's counts and
// R1CS hash in the reference's header format, and its -dump file is that
// circuit: every line parses, and hashing the lines again gives the
// header's hash.
func TestCircuitCommand(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "micro.r1cs.txt")
	var out, errb bytes.Buffer
	require.Equal(t, 0, run(ctx, []string{"circuit", "-shape", "test-micro", "-dump", path}, &out, &errb), errb.String())
	s, err := porep.ShapeByName("test-micro")
	require.NoError(t, err)
	c, err := circuit.ForShape(s)
	require.NoError(t, err)
	h, err := c.Hash(ctx, nil)
	require.NoError(t, err)
	st := c.Stats()
	header := r1cs.DumpHeader(st.Inputs, st.Aux, st.Constraints, mustHash(t, h))
	require.Contains(t, out.String(), header+"\n")

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	require.True(t, sc.Scan())
	require.Equal(t, header, sc.Text())
	tab := r1cs.NewSystem() // a coefficient table for the parsed terms
	var rows [][3][]r1cs.STerm
	for sc.Scan() {
		r, err := r1cs.ParseDumpLine(sc.Text())
		require.NoError(t, err)
		require.Equal(t, len(rows), r.Index)
		require.True(t, strings.HasPrefix(r.Name, "stacked drgporep/"), r.Name)
		var row [3][]r1cs.STerm
		for m, lc := range [3][]r1cs.Term{r.A, r.B, r.C} {
			for _, x := range lc {
				row[m] = append(row[m], r1cs.STerm{V: x.V, K: tab.CoeffID(&x.C)})
			}
		}
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	require.Len(t, rows, st.Constraints)
	x := r1cs.NewHasher(st.Inputs, st.Aux, st.Constraints, tab.Coeffs())
	for _, r := range rows {
		x.Row(r[0], r[1], r[2])
	}
	sum := x.Sum()
	require.Equal(t, h, hex.EncodeToString(sum[:]))

	// Usage errors.
	require.NotEqual(t, 0, run(ctx, []string{"circuit", "-shape", "no-such-shape"}, &out, &errb))
	errb.Reset()
	require.NotEqual(t, 0, run(ctx, []string{"circuit", "-no-hash", "-dump", path}, &out, &errb))
	require.Contains(t, errb.String(), "drop -no-hash")
}

func mustHash(t *testing.T, h string) [32]byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	require.NoError(t, err)
	var d [32]byte
	copy(d[:], b)
	return d
}
