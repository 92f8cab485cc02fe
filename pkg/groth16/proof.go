package groth16

import (
	"fmt"
)

// MarshalBinary encodes the proof in Filecoin's 192-byte form: compressed A
// (48 bytes) ‖ compressed B (96) ‖ compressed C (48), zcash/IETF flags. A
// proof with an element at infinity is refused (ErrInfinity): no honest
// prover produces one and UnmarshalBinary would reject it.
func (p *Proof) MarshalBinary() ([]byte, error) {
	out := make([]byte, ProofSize)
	if err := p.encodeTo(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *Proof) encodeTo(out []byte) error {
	if p.A.IsInfinity() || p.B.IsInfinity() || p.C.IsInfinity() {
		return &FormatError{Section: "proof", Index: -1, Err: ErrInfinity}
	}
	a, b, c := p.A.Bytes(), p.B.Bytes(), p.C.Bytes()
	copy(out[0:48], a[:])
	copy(out[48:144], b[:])
	copy(out[144:192], c[:])
	return nil
}

// UnmarshalBinary decodes a 192-byte proof. It rejects any other length,
// flag bits other than "compressed" (with or without the sort bit), points
// at infinity, coordinates ≥ p, x values without a curve point and points
// outside the prime-order subgroup. Errors are *FormatError wrapping one of
// ErrBadFlags, ErrInfinity, ErrNonCanonical, ErrNotOnCurve, ErrNotInSubgroup
// or ErrTruncated; Index says which element (0 = A, 1 = B, 2 = C).
func (p *Proof) UnmarshalBinary(data []byte) error {
	if len(data) != ProofSize {
		err := ErrTruncated
		if len(data) > ProofSize {
			err = ErrTrailingData
		}
		return &FormatError{Section: "proof", Index: -1, Err: fmt.Errorf("%w: %d bytes, want %d", err, len(data), ProofSize)}
	}
	var q Proof
	if err := decodeG1Compressed(&q.A, data[0:48]); err != nil {
		return &FormatError{Section: "proof", Index: 0, Offset: 0, Err: fmt.Errorf("A: %w", err)}
	}
	if err := decodeG2Compressed(&q.B, data[48:144]); err != nil {
		return &FormatError{Section: "proof", Index: 1, Offset: 48, Err: fmt.Errorf("B: %w", err)}
	}
	if err := decodeG1Compressed(&q.C, data[144:192]); err != nil {
		return &FormatError{Section: "proof", Index: 2, Offset: 144, Err: fmt.Errorf("C: %w", err)}
	}
	*p = q
	return nil
}

// JoinProofs concatenates partition proofs in order, the form of a
// multi-partition Filecoin proof (192 bytes per partition).
func JoinProofs(proofs []*Proof) ([]byte, error) {
	out := make([]byte, len(proofs)*ProofSize)
	for i, p := range proofs {
		if p == nil {
			return nil, fmt.Errorf("groth16: join proofs: proof %d is nil", i)
		}
		if err := p.encodeTo(out[i*ProofSize:]); err != nil {
			return nil, fmt.Errorf("groth16: join proofs: proof %d: %w", i, err)
		}
	}
	return out, nil
}

// SplitProofs decodes a concatenation of 192-byte proofs. The length must be
// a non-zero multiple of ProofSize; every proof is fully checked as in
// UnmarshalBinary, and an error names the partition that failed.
func SplitProofs(data []byte) ([]*Proof, error) {
	if len(data) == 0 || len(data)%ProofSize != 0 {
		return nil, &FormatError{Section: "proof", Index: -1,
			Err: fmt.Errorf("%w: %d bytes is not a non-zero multiple of %d", ErrTruncated, len(data), ProofSize)}
	}
	out := make([]*Proof, len(data)/ProofSize)
	for i := range out {
		out[i] = new(Proof)
		if err := out[i].UnmarshalBinary(data[i*ProofSize : (i+1)*ProofSize]); err != nil {
			return nil, fmt.Errorf("groth16: partition proof %d: %w", i, err)
		}
	}
	return out, nil
}
