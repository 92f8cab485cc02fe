// Package poseidon is Filecoin's Poseidon hash over the BLS12-381 scalar
// field, exactly as the neptune crate computes it for rust-fil-proofs
// (PoseidonConstants::new(): Strength::Standard, HashType::MerkleTree),
// natively; its R1CS gadget is pkg/gadget/poseidon.
//
// Parameters, for arity a (1 ≤ a ≤ MaxArity) and width t = a + 1:
//   - S-box x^5;
//   - R_F = 8 full rounds and R_P partial rounds from the Poseidon paper's
//     security inequalities for a 256-bit prime and 128-bit security, with
//     neptune's margin (R_F + 2, R_P · 1.075 rounded up): R_P = 55 for
//     t ≤ 3, 56 for t ≤ 7, 57 for t ≤ 15, 59 for t = 16, 17;
//   - (R_F + R_P) · t round constants from the Grain LFSR of the Poseidon
//     reference script (field 1, S-box 1, field size 255, t, R_F, R_P),
//     255-bit big-endian candidates, those ≥ r rejected;
//   - the t×t Cauchy MDS matrix M[i][j] = 1/(i + t + j);
//   - the Merkle-tree domain tag 2^a − 1 as state element 0; the inputs fill
//     elements 1..a; the digest is element 1 after the permutation.
//
// rust-fil-proofs uses this hash for the column hashes (arity = number of
// layers), for the nodes of tree C and tree R_last (arity 8, with 4 or 2 at
// the top of larger trees) and for comm_r = H(comm_c, comm_r_last) (arity 2).
//
// Constants are derived once per arity on first use and cached. The native
// hash runs the round-constant-compressed, sparse-matrix form of the
// permutation (the same optimisation neptune uses); tests check it against
// the textbook form and against published neptune / rust-fil-proofs vectors.
// OptimizedConstants gives the same constants in the layout neptune's
// bellperson circuit uses (round keys added before each linear layer), for
// the R1CS gadget in pkg/gadget/poseidon.
//
// The package does not hold Merkle trees, sponge or constant-length modes,
// or the strengthened parameter set: nothing in PoRep uses them.
package poseidon
