// Package merkle builds the Merkle trees of a sealed sector in memory and
// produces and checks their inclusion proofs, in the layout of
// storage-proofs-core merkle/proof.rs: a proof is Single (one tree of the base
// arity), Sub (base path, then one element over the sub-tree roots) or Top
// (base, sub, then one element over the top roots); each path element holds
// the arity−1 sibling hashes and the position of the path node among its
// siblings, and a node is the hash of its children in order (leaf inserted at
// its index). Tree D is binary over SHA-254 (Sha256Hasher: SHA-256 of the
// concatenated children, top two bits cleared); trees C and R_last use
// Poseidon with the shape's arities.
//
// SparseTree is the same tree over any number of leaves (2^31 included) when
// all but a set of explicit leaves hold one default value: it keeps the
// explicit leaves, the nodes above them and one default subtree hash per
// level, and its roots and proofs equal those of the dense Tree for the same
// assignment. The sealer's sparse benchmark mode opens 32 GiB and 64 GiB
// trees with it.
//
// It does not know what the leaves mean (data, columns, replica nodes) and
// holds no JSON: the C1 format lives in porep/c1.
package merkle
