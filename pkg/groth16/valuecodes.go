package groth16

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Value codes say, one byte per witness value, whether the value is 0, 1,
// r − 1, 2 or anything else. Most of a PoRep partition's values are one of
// the three (aux 97 %, B 98 %, C 85 %, A 73 %: BenchmarkWitnessProfile in
// pkg/porep/circuit), so a backend that copies the witness to another
// memory can send the codes and only the values coded CodeOther (the 2s
// are most of the rest of A and C). The
// synthesis writes a value's code beside the value, which costs a few
// comparisons on a value it holds, not a pass over the vectors.
const (
	CodeZero     uint8 = 0
	CodeOne      uint8 = 1 // the field's one
	CodeMinusOne uint8 = 2 // r − 1
	CodeOther    uint8 = 3
	// CodeTwo is the field's two: most of the A and C values that are not
	// 0, 1 or r − 1 (bellperson's XOR constraint reads 2a · b = a + b − c).
	CodeTwo uint8 = 4
)

// two is the field's two in Montgomery form.
var two = fr.NewElement(2)

// The field's one and r − 1 in Montgomery form, as fr.Element limbs
// (TestCodeOf checks them against fr).
const (
	one0, one1, one2, one3 = 0x00000001fffffffe, 0x5884b7fa00034802, 0x998c4fefecbc4ff5, 0x1824b159acc5056f
	neg0, neg1, neg2, neg3 = 0xfffffffd00000003, 0xfb38ec08fffb13fc, 0x99ad88181ce5880f, 0x5bc8f5f97cd877d8
)

// CodeOf returns v's value code. A value that is not reduced (not a valid
// fr.Element) is CodeOther, so whoever expands codes copies it as it is.
// (A branch-free form, no better predicted, made the solver slower here.)
func CodeOf(v *fr.Element) uint8 {
	switch v[0] {
	case 0:
		if v[1]|v[2]|v[3] == 0 {
			return CodeZero
		}
	case one0:
		if v[1] == one1 && v[2] == one2 && v[3] == one3 {
			return CodeOne
		}
	case neg0:
		if v[1] == neg1 && v[2] == neg2 && v[3] == neg3 {
			return CodeMinusOne
		}
	case two[0]:
		if v[1] == two[1] && v[2] == two[2] && v[3] == two[3] {
			return CodeTwo
		}
	}
	return CodeOther
}

// EncodeCodes sets dst[i] = CodeOf(&v[i]); dst is at least as long as v.
func EncodeCodes(dst []uint8, v []fr.Element) {
	for i := range v {
		dst[i] = CodeOf(&v[i])
	}
}

// ValueCodes are the codes of a Synthesized's A, B, C and Aux, element for
// element: X[i] = CodeOf(&s.X[i]).
type ValueCodes struct {
	A, B, C, Aux []uint8
}

// codedVectors pairs each coded vector of s with its codes.
func (s *Synthesized) codedVectors() []struct {
	name  string
	vals  []fr.Element
	codes []uint8
} {
	return []struct {
		name  string
		vals  []fr.Element
		codes []uint8
	}{{"a", s.A, s.Codes.A}, {"b", s.B, s.Codes.B}, {"c", s.C, s.Codes.C}, {"aux", s.Aux, s.Codes.Aux}}
}

// CheckCodeLengths reports whether s's codes (when it has any) come one per
// value: every backend's shape check (CheckSynthesized) runs it, since a
// backend that reads the codes reads that many.
func (s *Synthesized) CheckCodeLengths() error {
	if s.Codes == nil {
		return nil
	}
	for _, v := range s.codedVectors() {
		if len(v.codes) != len(v.vals) {
			return fmt.Errorf("%w: value codes for %s: %d %s codes for %d values", ErrShape, v.name, len(v.codes), v.name, len(v.vals))
		}
	}
	return nil
}

// CheckCodes reports whether s's codes (when it has any) match its values:
// the lengths, and every code against CodeOf of its value. It reads every
// value; tests and debugging use it, not the proving path.
func (s *Synthesized) CheckCodes() error {
	if err := s.CheckCodeLengths(); err != nil || s.Codes == nil {
		return err
	}
	for _, v := range s.codedVectors() {
		for i := range v.vals {
			if want := CodeOf(&v.vals[i]); v.codes[i] != want {
				return fmt.Errorf("%w: %s[%d] is coded %d, its value's code is %d", ErrShape, v.name, i, v.codes[i], want)
			}
		}
	}
	return nil
}
