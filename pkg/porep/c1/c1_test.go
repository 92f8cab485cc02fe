package c1

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/merkle"
)

func dom(b byte) porep.Domain {
	var d porep.Domain
	d[0] = b
	return d
}

// js is the serde_json form of dom(b).
func js(b byte) string {
	return "[" + itoa(int(b)) + strings.Repeat(",0", 31) + "]"
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestSerdeLayout pins the exact bytes serde_json writes for each type
// (field names and order of the Rust structs, externally tagged enums,
// PathElement._arity and LabelingProof._h skipped, Column._h as null).
func TestSerdeLayout(t *testing.T) {
	t.Parallel()
	single := FromProof(&merkle.Proof{Kind: merkle.Single, Root: dom(1), Leaf: dom(2),
		Base: []merkle.PathElement{{Hashes: []porep.Domain{dom(3)}, Index: 1}}})
	b, err := json.Marshal(single)
	require.NoError(t, err)
	require.Equal(t, `{"data":{"Single":{"root":`+js(1)+`,"leaf":`+js(2)+`,"path":{"path":[{"hashes":[`+js(3)+`],"index":1}]}}}}`, string(b))

	sub := FromProof(&merkle.Proof{Kind: merkle.Sub, Root: dom(1), Leaf: dom(2),
		Base: []merkle.PathElement{}, Sub: []merkle.PathElement{{Hashes: []porep.Domain{dom(4)}, Index: 0}}})
	b, err = json.Marshal(sub)
	require.NoError(t, err)
	require.Equal(t, `{"data":{"Sub":{"base_proof":{"path":[]},"sub_proof":{"path":[{"hashes":[`+js(4)+`],"index":0}]},"root":`+js(1)+`,"leaf":`+js(2)+`}}}`, string(b))

	top := FromProof(&merkle.Proof{Kind: merkle.Top, Root: dom(1), Leaf: dom(2), Base: []merkle.PathElement{}, Sub: []merkle.PathElement{}, Top: []merkle.PathElement{}})
	b, err = json.Marshal(top)
	require.NoError(t, err)
	require.Equal(t, `{"data":{"Top":{"base_proof":{"path":[]},"sub_proof":{"path":[]},"top_proof":{"path":[]},"root":`+js(1)+`,"leaf":`+js(2)+`}}}`, string(b))

	b, err = json.Marshal(Column{Index: 7, Rows: []porep.Domain{dom(5)}})
	require.NoError(t, err)
	require.Equal(t, `{"index":7,"rows":[`+js(5)+`],"_h":null}`, string(b))

	b, err = json.Marshal(LabelingProof{Parents: []porep.Domain{dom(6)}, LayerIndex: 2, Node: 9})
	require.NoError(t, err)
	require.Equal(t, `{"parents":[`+js(6)+`],"layer_index":2,"node":9}`, string(b))

	b, err = json.Marshal(EncodingProof{Parents: []porep.Domain{dom(6)}, LayerIndex: 2, Node: 9})
	require.NoError(t, err)
	require.Equal(t, `{"parents":[`+js(6)+`],"layer_index":2,"node":9}`, string(b))

	var out Output
	out.RegisteredProof = "StackedDrg2KiBV1_1"
	require.NoError(t, out.VanillaProofs.Set("StackedDrg2KiBV1", [][]ChallengeProof{{{}}}))
	var w bytes.Buffer
	_, err = out.WriteTo(&w)
	require.NoError(t, err)
	s := w.String()
	require.True(t, strings.HasPrefix(s, `{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":{"StackedDrg2KiBV1":[[{"comm_d_proofs":{"data":{}},"comm_r_last_proof":{"data":{}},"replica_column_proofs":{"c_x":{"column":{"index":0,"rows":null,"_h":null},"inclusion_proof":{"data":{}}},"drg_parents":null,"exp_parents":null},"labeling_proofs":null,"encoding_proof":{"parents":null,"layer_index":0,"node":0}}]]},"comm_r":[0,`), s)
	require.True(t, strings.HasSuffix(s, `,"replica_id":`+js(0)+`,"seed":`+js(0)+`,"ticket":`+js(0)+`}`), s)
}

func TestDomainJSON(t *testing.T) {
	t.Parallel()
	var d porep.Domain
	require.NoError(t, json.Unmarshal([]byte(" [ 255 ,1"+strings.Repeat(", 0", 30)+" ] "), &d))
	require.Equal(t, byte(255), d[0])
	for _, bad := range []string{
		`"abc"`, `[]`, `[1,2,3]`, `[` + strings.Repeat("0,", 32) + `0]`, `[256` + strings.Repeat(",0", 31) + `]`,
		`[-1` + strings.Repeat(",0", 31) + `]`, `[1.5` + strings.Repeat(",0", 31) + `]`, `[01` + strings.Repeat(",0", 31) + `]`, `null`,
	} {
		var x porep.Domain
		require.Error(t, json.Unmarshal([]byte(bad), &x), bad)
	}
}

func TestParseErrorsNamePaths(t *testing.T) {
	t.Parallel()
	doc := func(vanilla string) string {
		return `{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":` + vanilla +
			`,"comm_r":` + js(0) + `,"comm_d":` + js(0) + `,"replica_id":` + js(0) + `,"seed":` + js(0) + `,"ticket":` + js(0) + `}`
	}
	cases := []struct {
		in, want string
	}{
		{``, "empty input"},
		{`{"registered_proof":`, "truncated"},
		{`{]`, "invalid JSON"},
		{doc(`{"StackedDrg2KiBV1":[]}`) + ` {}`, "trailing data"},
		{strings.Replace(doc(`{"StackedDrg2KiBV1":[]}`), `"StackedDrg2KiBV1_1"`, `"StackedDrg2KiBV9"`, 1), `registered_proof: unknown registered proof "StackedDrg2KiBV9"`},
		{doc(`{"StackedDrg2KiBV1":[]}`), "vanilla_proofs.StackedDrg2KiBV1: 0 partitions, shape 2KiB has 1"},
		{doc(`{"StackedDrg32GiBV1":[[]]}`), "variant StackedDrg32GiBV1 does not match"},
		{doc(`{"StackedDrg2KiBV1_1":[[]]}`), `unknown field "StackedDrg2KiBV1_1"`},
		{doc(`{}`), "vanilla_proofs: no variant"},
		{doc(`{"StackedDrg2KiBV1":[[]],"StackedDrg8MiBV1":[[]]}`), "more than one variant"},
		{doc(`{"StackedDrg2KiBV1":[[]]}`), "vanilla_proofs.StackedDrg2KiBV1[0]: 0 challenge proofs, shape 2KiB has 2"},
		{doc(`{"StackedDrg2KiBV1":[[{"comm_d_proofs":{"data":{"Single":{"root":[1,2]}}}}]]}`), "vanilla_proofs.StackedDrg2KiBV1.comm_d_proofs.data.Single.root: cannot use JSON array of 2 bytes"},
		{doc(`{"StackedDrg2KiBV1":[[{"replica_column_proofs":{"c_x":{"column":{"index":-1}}}}]]}`), "vanilla_proofs.StackedDrg2KiBV1.replica_column_proofs.c_x.column.index: cannot use JSON number -1 as uint32"},
		{doc(`{"StackedDrg2KiBV1":[[{"replica_column_proofs":{"c_x":{"column":{"_h":{}}}}}]]}`), "column._h: cannot use JSON non-null value"},
		{doc(`{"StackedDrg2KiBV1":[[{"encoding_proof":{"bogus":1}}]]}`), `unknown field "bogus"`},
		{strings.Replace(doc(`{}`), `"comm_r":`+js(0), `"comm_r":[1]`, 1), "comm_r: cannot use JSON array of 1 bytes"},
	}
	for _, c := range cases {
		_, err := ParseBytes([]byte(c.in))
		require.Error(t, err, c.in)
		var fe *FormatError
		require.True(t, errors.As(err, &fe), "%T %v", err, err)
		require.Contains(t, err.Error(), c.want, c.in)
	}
	_, err := Parse(strings.NewReader(doc(`{}`)), ParseOptions{MaxBytes: 100})
	require.ErrorIs(t, err, ErrTooLarge)
}
