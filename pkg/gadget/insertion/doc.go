// Package insertion is storage-proofs-core's insertion permutation
// (gadgets/insertion.rs) on pkg/r1cs: Insert places an allocated number
// among the siblings of a Merkle path level at the position its index bits
// give, with bellperson's hand-written selections for 2, 4 and 8 children
// and the general selection network otherwise; Pick and Select are its
// building blocks.
//
// It does not hold the Merkle path itself (pkg/gadget/por) or hashes.
package insertion
