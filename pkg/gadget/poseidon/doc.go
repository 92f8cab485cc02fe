// Package poseidon is Filecoin's Poseidon hash as a circuit on pkg/r1cs:
// neptune's bellperson circuit (neptune::circuit::poseidon_hash, the one
// filecoin-hashers' PoseidonFunction calls from hash2_circuit and
// hash_multi_leaf_circuit) with PoseidonConstants::new() for each arity,
// building the same variables and constraints in the same order, with the
// same coefficients and namespace names.
//
// The circuit runs the optimised permutation (pkg/poseidon's
// OptimizedConstants): the domain tag's first S-box is a constant; each
// other S-box allocates x², x⁴ and x⁵ plus the round key (its input too,
// when that is a linear combination of earlier variables, with a
// constraint "enforce num allocation preserves lc"); the linear layers
// only build linear combinations; partial rounds use neptune's sparse
// matrices; the digest is allocated at the end ("hash result"). A hash of
// arity a with R_F full and R_P partial rounds (width t = a + 1) makes
// 3a + 4(R_F − 1)t + 4R_P + 1 constraints and as many aux variables.
//
// When the CS records no constraints (a witness generator), Hash computes
// the values natively, without linear combinations, and writes them
// directly through r1cs.Bulk when the CS offers it.
//
// The package does not hold the native hash (pkg/poseidon), neptune's
// newer circuit (circuit2) or its sponge, none of which Filecoin's PoRep
// circuit uses.
package poseidon
