// Package c1 holds the commit-phase-1 output of a sealed sector — what a
// storage provider submits for a C2 proof — in rust-fil-proofs' JSON form:
// filecoin-proofs-api SealCommitPhase1Output as serde_json writes it
// (field names, order, enum tags, [u8; 32] as arrays of integers, PhantomData
// as null). It parses with size limits, rejects unknown fields, checks every
// length against the proof's shape and names the JSON path of what is wrong;
// it writes byte-for-byte the form serde_json produces.
//
// Test shapes (porep.Shape.Test) use registered_proof "C2ClusterTest/<name>"
// and the vanilla_proofs tag "C2ClusterTest", which no official proof uses.
//
// It does not check any hash: porep/verifier does.
package c1
