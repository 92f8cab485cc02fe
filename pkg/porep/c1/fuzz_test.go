package c1_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/porep/verifier"
)

// FuzzParseC1 feeds arbitrary bytes to the parser and, when a document
// parses, to the structural check: neither may panic, and every rejection is
// an error.
func FuzzParseC1(f *testing.F) {
	var valid bytes.Buffer
	if _, err := sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: "test-mini", Seed: 3}, &valid); err != nil {
		f.Fatal(err)
	}
	doc := valid.Bytes()
	f.Add(doc)
	f.Add(doc[:len(doc)/2])
	f.Add(bytes.Replace(doc, []byte(`"index":1`), []byte(`"index":99`), 1))
	f.Add(bytes.Replace(doc, []byte(`"_h":null`), []byte(`"_h":1`), 1))
	f.Add([]byte(`{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":{"StackedDrg2KiBV1":[[{}]]}}`))
	f.Add([]byte(`[]`))
	f.Add(bytes.Replace(doc, []byte(`"comm_d":`), []byte(`"comm_d":[],"COMM_D":`), 1))
	f.Add(append(bytes.Repeat([]byte(" "), 200<<10), doc...))
	f.Add([]byte(`{"vanilla_proofs":{"StackedDrg2KiBV1":[[{"comm_d_proofs":{"data":{"Single":{},"Sub":{}}}}]]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := c1.Parse(bytes.NewReader(data), c1.ParseOptions{MaxBytes: 1 << 20})
		if err != nil {
			if out != nil {
				t.Fatal("output with error")
			}
			return
		}
		_ = verifier.CheckStructure(out, verifier.Options{})
	})
}
