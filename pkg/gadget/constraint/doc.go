// Package constraint is storage-proofs-core's small relations between
// allocated numbers (gadgets/constraint.rs and gadgets/encode.rs) on
// pkg/r1cs, in bellperson's exact constraints and names: Equal (a·1 = b),
// Sum ((a+b)·1 = s), Difference ((d+b)·1 = a), Add and Sub (which
// allocate the result), and the PoRep encoding Encode (key + value) and
// Decode (value − key).
//
// It does not hold bits, hashes or Merkle paths (pkg/gadget/...).
package constraint
