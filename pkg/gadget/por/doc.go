// Package por is storage-proofs-core's proof-of-retrievability circuit
// (gadgets/por.rs, with variables.rs' Root) on pkg/r1cs: a Merkle
// inclusion proof of a leaf under a root in a tree of base arity with an
// optional sub and top layer (rust-fil-proofs' MerkleTreeWrapper<_, U, V,
// W>), as bellperson builds it. Each path level allocates its index bits
// and siblings, inserts the running node among them (pkg/gadget/insertion)
// and hashes the level with the tree's node hash (a Hasher, e.g.
// pkg/gadget/hashers' SHA256 or Poseidon); the path's index bits are
// packed into public inputs and the computed root is constrained to equal
// the root, which a public proof also exposes.
//
// It does not hold the hashes (pkg/gadget/hashers) or trees themselves
// (pkg/porep/merkle).
package por
