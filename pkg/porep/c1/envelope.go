package c1

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Commit2In is lotus-bench's C2 input envelope, which Lotus writes for
// `lotus-bench prove` and which Curio's proving-engine client and other
// tools send: {"SectorNum": n, "Phase1Out": "<base64 of the C1 JSON>",
// "SectorSize": bytes}, with an optional "Miner" ("f01001") that some
// writers add.
type Commit2In struct {
	SectorNum  uint64
	Phase1Out  []byte // the C1 JSON (base64 in the envelope)
	SectorSize uint64
	// Miner is the miner's address as written ("" when absent).
	Miner string
}

// commit2InJSON is the envelope as JSON: every field checked for presence.
type commit2InJSON struct {
	SectorNum  *uint64 `json:"SectorNum"`
	Phase1Out  *[]byte `json:"Phase1Out"`
	SectorSize *uint64 `json:"SectorSize"`
	Miner      *string `json:"Miner"`
}

// IsCommit2In reports whether data looks like the envelope: a JSON object
// whose first key is one of the envelope's (a C1 document starts with
// "registered_proof"). It reads only the first key; ParseCommit2In checks
// the rest.
func IsCommit2In(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	t, err := dec.Token()
	if err != nil {
		return false
	}
	switch t {
	case "SectorNum", "Phase1Out", "SectorSize", "Miner":
		return true
	}
	return false
}

// ParseCommit2In reads the envelope: unknown fields, a missing SectorNum,
// Phase1Out or SectorSize, bad base64 and trailing data are *FormatError
// values naming the field. Phase1Out is returned as it is (Parse it).
func ParseCommit2In(data []byte) (*Commit2In, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e commit2InJSON
	if err := dec.Decode(&e); err != nil {
		var ferr *FormatError
		if errors.As(decodeError(err), &ferr) {
			if ferr.Path == "Phase1Out" || (ferr.Path == "" && isBase64Error(err)) {
				ferr.Path, ferr.Reason = "Phase1Out", "not base64: "+err.Error()
			}
			ferr.Reason = "Commit2In envelope: " + ferr.Reason
			return nil, ferr
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &FormatError{Offset: dec.InputOffset(), Reason: "Commit2In envelope: trailing data after the document"}
	}
	for _, f := range []struct {
		name    string
		missing bool
	}{{"SectorNum", e.SectorNum == nil}, {"Phase1Out", e.Phase1Out == nil}, {"SectorSize", e.SectorSize == nil}} {
		if f.missing {
			return nil, formatErr(f.name, "Commit2In envelope: missing")
		}
	}
	if len(*e.Phase1Out) == 0 {
		return nil, formatErr("Phase1Out", "Commit2In envelope: empty")
	}
	out := &Commit2In{SectorNum: *e.SectorNum, Phase1Out: *e.Phase1Out, SectorSize: *e.SectorSize}
	if e.Miner != nil {
		out.Miner = *e.Miner
	}
	return out, nil
}

// isBase64Error reports whether a JSON decoding error came from a []byte
// field's base64 (encoding/base64's CorruptInputError, which the JSON
// decoder passes on as it is).
func isBase64Error(err error) bool {
	var ce base64.CorruptInputError
	return errors.As(err, &ce)
}

// CheckSectorSize reports whether the envelope's sector size is out's
// shape's (an error naming both when not).
func (e *Commit2In) CheckSectorSize(out *Output) error {
	if out == nil || out.Shape == nil {
		return fmt.Errorf("c1: no shape to check the sector size against")
	}
	if want := out.Shape.SectorSize(); e.SectorSize != want {
		return formatErr("SectorSize", "Commit2In envelope: %d bytes, but the C1 output's %s is a %d-byte sector", e.SectorSize, out.RegisteredProof, want)
	}
	return nil
}
