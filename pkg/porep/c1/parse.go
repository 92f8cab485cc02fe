package c1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/c2cluster/c2cluster/internal/jsonscan"
	"github.com/c2cluster/c2cluster/pkg/porep"
)

// DefaultMaxBytes bounds the input Parse reads: the largest size limit of
// any registered shape (MaxBytes; about 49 MB, the 64 GiB shape's). Each
// document must also keep within its own shape's limit.
var DefaultMaxBytes = MaxBytesAll()

// ParseOptions tune Parse. The zero value uses DefaultMaxBytes.
type ParseOptions struct {
	// MaxBytes is the largest input read; 0 means DefaultMaxBytes.
	MaxBytes int64
}

// Parse reads one C1 document: size-limited, then as ParseBytes.
func Parse(r io.Reader, opts ParseOptions) (*Output, error) {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("c1: read: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	}
	return ParseBytes(data)
}

// ParseBytes parses an in-memory document. Before decoding anything it
// checks the JSON in one pass (grammar, nesting, no member name twice in an
// object — names compared case-insensitively, as encoding/json matches
// them to fields) and the document's size against its shape's limit
// (MaxBytes of the registered proof it names). Then it decodes with unknown
// fields rejected, resolves the registered proof to a porep.Shape and
// checks every count and length against the shape, and comm_r, comm_d and
// replica_id as field elements (see Validate).
func ParseBytes(data []byte) (*Output, error) {
	var rp []byte
	err := jsonscan.Scan(data, jsonscan.Options{FoldNames: true, String: func(path []jsonscan.Step, raw []byte) error {
		if len(path) == 1 && bytes.EqualFold(path[0].Name, []byte("registered_proof")) {
			rp = jsonscan.Unquote(raw)
		}
		return nil
	}})
	if err != nil {
		return nil, scanError(data, err)
	}
	if rp != nil {
		if s, err := porep.ShapeByRegisteredProof(string(rp)); err == nil {
			if limit := MaxBytes(s); int64(len(data)) > limit {
				return nil, fmt.Errorf("%w: %d bytes; a C1 output of shape %s (%s) has at most %d bytes as compact JSON (jq -c compacts one)",
					ErrTooLarge, len(data), s.Name, s.RegisteredProof, limit)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var out Output
	if err := dec.Decode(&out); err != nil {
		return nil, decodeError(err)
	}
	shape, err := porep.ShapeByRegisteredProof(out.RegisteredProof)
	if err != nil {
		return nil, &FormatError{Path: "registered_proof", Reason: fmt.Sprintf("unknown registered proof %q", out.RegisteredProof)}
	}
	out.Shape = shape
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return &out, nil
}

// scanError turns a jsonscan rejection into a FormatError.
func scanError(data []byte, err error) error {
	var se *jsonscan.Error
	if !errors.As(err, &se) {
		return &FormatError{Reason: err.Error()}
	}
	reason := se.Reason
	switch {
	case reason == "empty document" && len(bytes.TrimSpace(data)) == 0:
		return &FormatError{Reason: "empty input"}
	case strings.HasPrefix(reason, "truncated"):
		reason = "truncated JSON: " + reason
	case reason == "data after the document":
		reason = "trailing data after the document"
	case strings.HasPrefix(reason, "duplicate member name"):
	default:
		reason = "invalid JSON: " + reason
	}
	return &FormatError{Path: se.Path, Offset: int64(se.Offset), Reason: reason}
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &FormatError{Offset: syn.Offset, Reason: "invalid JSON: " + syn.Error()}
	case errors.As(err, &typ):
		reason := fmt.Sprintf("cannot use JSON %s as %s", typ.Value, typ.Type)
		return &FormatError{Path: typ.Field, Offset: typ.Offset, Reason: reason}
	case errors.Is(err, io.EOF):
		return &FormatError{Reason: "empty input"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FormatError{Reason: "truncated JSON"}
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &FormatError{Reason: "unknown field " + rest}
	}
	return &FormatError{Reason: strings.TrimPrefix(msg, "json: ")}
}

// Validate checks the document against its shape (Shape must be set): the
// vanilla proof tag, the number of partitions and challenges, and every
// list length and Merkle path layout. It computes no hash.
func (o *Output) Validate() error {
	s := o.Shape
	if s == nil {
		return formatErr("registered_proof", "shape not resolved")
	}
	// The circuit takes these as BLS12-381 scalars: a value at or above the
	// modulus could never be proved.
	for _, d := range []struct {
		name string
		v    porep.Domain
	}{{"comm_r", o.CommR}, {"comm_d", o.CommD}, {"replica_id", o.ReplicaID}} {
		if _, err := d.v.Element(); err != nil {
			return formatErr(d.name, "%s is not a canonical BLS12-381 scalar (little-endian, below the field modulus)", d.v)
		}
	}
	tag, err := o.VanillaProofs.Tag()
	if err != nil {
		return formatErr("vanilla_proofs", "%v", err)
	}
	if tag != s.VanillaProofTag {
		return formatErr("vanilla_proofs", "variant %s does not match registered proof %s (want %s)", tag, o.RegisteredProof, s.VanillaProofTag)
	}
	parts := o.VanillaProofs.Partitions()
	base := "vanilla_proofs." + tag
	if len(parts) != s.Partitions {
		return formatErr(base, "%d partitions, shape %s has %d", len(parts), s.Name, s.Partitions)
	}
	for k, part := range parts {
		if len(part) != s.ChallengesPerPartition {
			return formatErr(fmt.Sprintf("%s[%d]", base, k), "%d challenge proofs, shape %s has %d", len(part), s.Name, s.ChallengesPerPartition)
		}
		for i := range part {
			if err := validateChallenge(s, fmt.Sprintf("%s[%d][%d]", base, k, i), &part[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateChallenge(s *porep.Shape, path string, p *ChallengeProof) error {
	if err := validateMerkle(path+".comm_d_proofs", &p.CommDProofs, porep.TreeShape{Base: 2}, s.Nodes); err != nil {
		return err
	}
	if err := validateMerkle(path+".comm_r_last_proof", &p.CommRLastProof, s.Tree, s.Nodes); err != nil {
		return err
	}
	rc := &p.ReplicaColumnProofs
	if err := validateColumn(s, path+".replica_column_proofs.c_x", &rc.CX); err != nil {
		return err
	}
	if len(rc.DrgParents) != s.BaseDegree {
		return formatErr(path+".replica_column_proofs.drg_parents", "%d columns, want %d", len(rc.DrgParents), s.BaseDegree)
	}
	for j := range rc.DrgParents {
		if err := validateColumn(s, fmt.Sprintf("%s.replica_column_proofs.drg_parents[%d]", path, j), &rc.DrgParents[j]); err != nil {
			return err
		}
	}
	if len(rc.ExpParents) != s.ExpDegree {
		return formatErr(path+".replica_column_proofs.exp_parents", "%d columns, want %d", len(rc.ExpParents), s.ExpDegree)
	}
	for j := range rc.ExpParents {
		if err := validateColumn(s, fmt.Sprintf("%s.replica_column_proofs.exp_parents[%d]", path, j), &rc.ExpParents[j]); err != nil {
			return err
		}
	}
	if len(p.LabelingProofs) != s.Layers {
		return formatErr(path+".labeling_proofs", "%d proofs, want one per layer (%d)", len(p.LabelingProofs), s.Layers)
	}
	for l := range p.LabelingProofs {
		if n := len(p.LabelingProofs[l].Parents); n != s.LabelParents {
			return formatErr(fmt.Sprintf("%s.labeling_proofs[%d].parents", path, l), "%d parents, want %d", n, s.LabelParents)
		}
	}
	if n := len(p.EncodingProof.Parents); n != s.LabelParents {
		return formatErr(path+".encoding_proof.parents", "%d parents, want %d", n, s.LabelParents)
	}
	return nil
}

func validateColumn(s *porep.Shape, path string, c *ColumnProof) error {
	if len(c.Column.Rows) != s.Layers {
		return formatErr(path+".column.rows", "%d rows, want %d (layers)", len(c.Column.Rows), s.Layers)
	}
	return validateMerkle(path+".inclusion_proof", &c.InclusionProof, s.Tree, s.Nodes)
}

func validateMerkle(path string, m *MerkleProof, t porep.TreeShape, leaves uint64) error {
	p, err := m.Proof()
	if err != nil {
		return formatErr(path+".data", "%v", err)
	}
	if err := p.CheckShape(t, leaves); err != nil {
		return formatErr(path, "%s", strings.TrimPrefix(err.Error(), "merkle: "))
	}
	return nil
}

// MarshalJSON is not defined on Output: encoding/json already writes the
// serde layout. WriteTo writes the document as serde_json::to_vec does
// (compact, no trailing newline).
func (o *Output) WriteTo(w io.Writer) (int64, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return 0, fmt.Errorf("c1: encode: %w", err)
	}
	n, err := w.Write(b)
	return int64(n), err
}
