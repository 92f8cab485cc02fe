// Package hashers is filecoin-hashers' circuit hash functions on
// pkg/r1cs, the node and pair hashes storage-proofs circuits call: SHA256
// (Sha256Function: hash_multi_leaf_circuit, hash2_circuit,
// hash_leaf_bits_circuit, hash_circuit — SHA-256 over the children's
// bits, byte by byte, packed back into 254 bits) and Poseidon
// (PoseidonFunction, pkg/gadget/poseidon), both as a Merkle node hasher
// (HashMultiLeaf); and ReverseBitNumbering (storage-proofs-core util.rs),
// the byte-wise bit reversal between a field element's little-endian bits
// and SHA-256's byte order.
//
// It does not hold the hash circuits themselves (pkg/gadget/sha256,
// pkg/gadget/poseidon) or Merkle paths (pkg/gadget/por).
package hashers
