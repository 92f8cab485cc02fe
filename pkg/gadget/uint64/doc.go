// Package uint64 is storage-proofs-core's UInt64 gadget (gadgets/uint64.rs)
// on pkg/r1cs: 64 Booleans, least significant first, read as an unsigned
// integer, allocated bit by bit ("allocated bit i") and exposed as one
// public input through multipack.
//
// It does not hold arithmetic on the words (storage-proofs-core has none)
// or 32-bit words (pkg/gadget/uint32).
package uint64
