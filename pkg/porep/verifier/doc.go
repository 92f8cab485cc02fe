// Package verifier checks the vanilla proofs of a C1 document natively, as
// storage-proofs-porep's Proof::verify and verify_all_partitions do, plus the
// consistency checks the partition circuit enforces (labeling-proof parents
// equal the opened parent columns).
//
// CheckStructure is the cheap pre-flight check (no Merkle or label hashing:
// only the challenge derivation and graph parents): every challenge index,
// path index, column index, layer index, root and parent list is consistent.
// Verify adds every hash: Merkle paths of trees D, C and R_last, column
// hashes, labels, encoding, and comm_r = Poseidon(comm_c, comm_r_last).
// Failures are *Error values naming the partition, the challenge and the
// check that failed.
//
// It does not parse JSON (porep/c1) or build circuits (porep/circuit).
package verifier
