package c1_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/c1/c1test"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
)

// TestMaxBytesFitsRealDocuments: every shape's limit admits real documents
// of the shape (sealed test shapes, sparse official shapes, Lotus's) and
// stays within 2× their size plus 128 KiB, so it is a limit of that shape
// and not one for all.
func TestMaxBytesFitsRealDocuments(t *testing.T) {
	check := func(t *testing.T, s *porep.Shape, doc []byte) {
		t.Helper()
		limit := c1.MaxBytes(s)
		require.LessOrEqual(t, int64(len(doc)), limit, "%s: a real document is over the limit", s.Name)
		require.LessOrEqual(t, limit, 2*int64(len(doc))+128<<10, "%s: limit %d is loose for a %d-byte document", s.Name, limit, len(doc))
		_, err := c1.ParseBytes(doc)
		require.NoError(t, err, s.Name)
	}
	for _, s := range porep.Shapes() {
		if !s.Test && s.Nodes > 1<<24 && testing.Short() {
			continue
		}
		if s.Nodes > 1<<30 { // 64 GiB: the same as 32 GiB but for one more level; seconds more
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			var buf bytes.Buffer
			var err error
			if s.Test {
				_, err = sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: s.Name, Seed: 7}, &buf)
			} else {
				_, err = sealer.WriteSparseC1(context.Background(), sealer.SparseC1Config{Shape: s.Name, Seed: 7}, &buf)
			}
			require.NoError(t, err)
			check(t, &s, buf.Bytes())
		})
	}
	for _, name := range []string{"2KiB", "8MiB"} {
		t.Run("lotus-"+name, func(t *testing.T) {
			doc := c1test.LotusDoc(t, name+".json")
			s, err := porep.ShapeByName(name)
			require.NoError(t, err)
			check(t, s, doc)
		})
	}
	require.Equal(t, c1.DefaultMaxBytes, c1.MaxBytesAll())
	s64, err := porep.ShapeByName("64GiB")
	require.NoError(t, err)
	require.Equal(t, c1.MaxBytes(s64), c1.MaxBytesAll(), "the 64 GiB shape has the largest documents")
}

func sealed(t *testing.T, shape string) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: shape, Seed: 9}, &buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// TestParseRejectsPaddedDocument: a small shape's document padded past its
// own limit (but far below the largest shape's) is refused before decoding,
// naming the shape and the limit.
func TestParseRejectsPaddedDocument(t *testing.T) {
	doc := sealed(t, "test-micro")
	s, err := porep.ShapeByName("test-micro")
	require.NoError(t, err)
	limit := c1.MaxBytes(s)
	padded := append(bytes.Repeat([]byte(" "), int(limit)-len(doc)+1), doc...)
	_, err = c1.ParseBytes(padded)
	require.ErrorIs(t, err, c1.ErrTooLarge)
	require.ErrorContains(t, err, "shape test-micro")
	require.ErrorContains(t, err, "at most")
	// Exactly at the limit is accepted.
	_, err = c1.ParseBytes(padded[1:])
	require.NoError(t, err)
}

// TestParseRejectsDuplicateNames: a member twice in one object — the same
// name, or one encoding/json would take for it — is refused with its path;
// without the check the last would silently win.
func TestParseRejectsDuplicateNames(t *testing.T) {
	doc := string(sealed(t, "test-micro"))
	i := strings.Index(doc, `"comm_r":`)
	require.Positive(t, i)
	for _, tc := range []struct{ in, want string }{
		{doc[:i] + `"comm_r":[` + strings.Repeat("0,", 31) + `0],` + doc[i:], `c1: comm_r: duplicate member name "comm_r"`},
		{doc[:i] + `"Comm_R":[` + strings.Repeat("0,", 31) + `0],` + doc[i:], `c1: comm_r: duplicate member name "comm_r" (same as "Comm_R"`},
		{strings.Replace(doc, `"_h":null`, `"_h":null,"_h":null`, 1), `c_x.column._h: duplicate member name "_h"`},
	} {
		_, err := c1.ParseBytes([]byte(tc.in))
		var fe *c1.FormatError
		require.True(t, errors.As(err, &fe), "%v", err)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestParseRejectsNonCanonicalCommitments: comm_r, comm_d or replica_id at
// or above the BLS12-381 scalar modulus is refused at parse, naming it.
func TestParseRejectsNonCanonicalCommitments(t *testing.T) {
	doc := sealed(t, "test-micro")
	out, err := c1.ParseBytes(doc)
	require.NoError(t, err)
	// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001,
	// little-endian; r itself is the smallest non-canonical value.
	modulus := porep.Domain{1, 0, 0, 0, 255, 255, 255, 255, 254, 91, 254, 255, 2, 164, 189, 83, 5, 216, 161, 9, 8, 216, 57, 51, 72, 125, 157, 41, 83, 167, 237, 115}
	below := modulus
	below[0] = 0
	for _, field := range []string{"comm_r", "comm_d", "replica_id"} {
		set := func(v porep.Domain) []byte {
			o := *out
			switch field {
			case "comm_r":
				o.CommR = v
			case "comm_d":
				o.CommD = v
			case "replica_id":
				o.ReplicaID = v
			}
			var buf bytes.Buffer
			_, err := o.WriteTo(&buf)
			require.NoError(t, err)
			return buf.Bytes()
		}
		_, err := c1.ParseBytes(set(modulus))
		require.ErrorContains(t, err, "c1: "+field+": "+modulus.String()+" is not a canonical BLS12-381 scalar")
		_, err = c1.ParseBytes(set(below))
		require.NoError(t, err, "%s = r-1 is canonical", field)
	}
}
