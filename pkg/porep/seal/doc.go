// Package seal checks a sealed sector's final C2 proof as rust-fil-proofs'
// verify_seal (filecoin-proofs api/seal.rs) does, from what the chain knows
// of the sector:
//
//   - Sector: the registered proof (a porep.Shape), comm_r, comm_d, prover
//     id, sector number, ticket and interactive seed; Sector.Statement checks
//     them as verify_seal does first (commitments non-zero and canonical
//     field elements) and derives the replica id;
//   - Statement: replica id, comm_d, comm_r and seed; PublicInputs(k) are
//     partition k's public inputs in StackedCompound::generate_public_inputs
//     order (replica_id, comm_d, comm_r, then per challenge the tree-D path
//     index, each DRG and expander parent's tree-C path index, the challenge,
//     the tree-R_last and tree-C path indexes), computed natively: challenges
//     from the seed (porep.Challenges), parents from the graph;
//   - Verify: the proof's length (Partitions × 192 bytes), its points, and
//     one batch verification of every partition against a verifying key;
//   - the inputs' outside forms: prover ids from miner ids (ProverID,
//     ParseMinerID: filecoin-ffi's toProverID), commitments as the CIDs
//     Lotus prints or as hex (ParseCommitment, CommitmentCID).
//
// It does not find or check verifying-key files (pkg/porep/ceremony for
// Filecoin's official ones, pkg/porep/circuit for c2cluster's), prove, or
// check vanilla proofs (pkg/porep/verifier).
package seal
