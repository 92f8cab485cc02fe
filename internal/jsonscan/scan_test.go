package jsonscan_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/internal/jsonscan"
)

func TestScanDuplicates(t *testing.T) {
	for _, tc := range []struct {
		doc, err string
		fold     bool
	}{
		{doc: `{"a":1,"b":{"c":[1,{"d":2,"d":3}]}}`, err: `b.c[1].d: duplicate member name "d"`},
		{doc: `{"a":1,"a":1}`, err: `duplicate member name "a"`},
		{doc: `{"a":1,"\u0061":2}`, err: `duplicate member name "a"`},
		{doc: `{"comm_r":1,"COMM_R":2}`, fold: true, err: `duplicate member name "COMM_R" (same as "comm_r"`},
		{doc: `{"comm_r":1,"COMM_R":2}`},
		{doc: `{"k":1,"\u212a":2}`, fold: true, err: `duplicate member name`}, // Kelvin sign folds to k
		{doc: `[{"a":1},{"a":1}]`},
		{doc: `{"a":{"a":{"a":1}}}`},
	} {
		err := jsonscan.Scan([]byte(tc.doc), jsonscan.Options{FoldNames: tc.fold})
		if tc.err == "" {
			require.NoError(t, err, tc.doc)
			continue
		}
		require.ErrorContains(t, err, tc.err, tc.doc)
	}
}

// TestScanManyNames: an object of many names (the map path) still finds a
// duplicate, folded or not.
func TestScanManyNames(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 100 {
		b.WriteString(`"n` + strings.Repeat("x", i) + `":0,`)
	}
	ok := b.String() + `"last":0}`
	require.NoError(t, jsonscan.Scan([]byte(ok), jsonscan.Options{FoldNames: true}))
	dup := b.String() + `"N` + strings.Repeat("X", 50) + `":0}`
	require.ErrorContains(t, jsonscan.Scan([]byte(dup), jsonscan.Options{FoldNames: true}), "duplicate member name")
	require.NoError(t, jsonscan.Scan([]byte(dup), jsonscan.Options{}))
}

func TestScanDepth(t *testing.T) {
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	require.ErrorContains(t, jsonscan.Scan([]byte(deep), jsonscan.Options{}), "nested deeper than 64 levels")
	require.NoError(t, jsonscan.Scan([]byte(deep), jsonscan.Options{MaxDepth: 65}))
}

func TestScanVisitor(t *testing.T) {
	doc := `{"registered_proof":"S\u0074acked","x":[{"y":"a"}],"n":"skip"}`
	var got []string
	errStop := errors.New("stop here")
	err := jsonscan.Scan([]byte(doc), jsonscan.Options{String: func(path []jsonscan.Step, raw []byte) error {
		got = append(got, jsonscan.FormatPath(path)+"="+string(jsonscan.Unquote(raw)))
		if string(raw) == "skip" {
			return errStop
		}
		return nil
	}})
	require.Equal(t, []string{"registered_proof=Stacked", "x[0].y=a", "n=skip"}, got)
	require.ErrorIs(t, err, errStop)
	var se *jsonscan.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, "n", se.Path)
}

func TestUnquote(t *testing.T) {
	for _, s := range []string{`plain`, `a\"b\\c\/d\b\f\n\r\t`, `\u00e9\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ude00\u0041`} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(`"`+s+`"`), &want))
		require.Equal(t, want, string(jsonscan.Unquote([]byte(s))), s)
	}
}

// FuzzScan: Scan accepts exactly the documents encoding/json accepts, less
// those with duplicate names or deeper than the limit; it never panics; and
// a duplicate it reports is one encoding/json would have merged.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,-2.5e+3,true,false,null,"x\u0041\n"]}`, `{"a":1,"a":2}`,
		`{"a":{"b":1},"A":2}`, `"\ud800"`, `01`, `[1,]`, `{"a" 1}`, ` {"a":"\u00zz"} `, `[[[[]]]]`, `1e`, `-`, "\"\x01\""} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, fold bool) {
		err := jsonscan.Scan(data, jsonscan.Options{FoldNames: fold, MaxDepth: 1000})
		valid := json.Valid(data)
		var se *jsonscan.Error
		switch {
		case err == nil && !valid:
			t.Fatalf("Scan accepts what encoding/json rejects: %q", data)
		case err != nil && !errors.As(err, &se):
			t.Fatalf("error of another type: %v", err)
		case err != nil && valid && !strings.Contains(se.Reason, "duplicate member name") && !strings.Contains(se.Reason, "nested deeper"):
			t.Fatalf("Scan rejects valid JSON %q: %v", data, err)
		}
	})
}
