// Package porep holds the rules of Filecoin's stacked-DRG proof of replication
// (SDR PoRep) that the sealer, the C1 format, the verifier and the partition
// circuit all share:
//
//   - Shape: the parameters of one proof type (nodes, layers, partitions,
//     challenges, graph degrees, tree arities, porep id), and a registry of the
//     official RegisteredSealProof v1.1 shapes plus small test shapes, looked up
//     by name or by registered-proof string;
//   - Domain: a 32-byte little-endian node value (a label, a Merkle node, a
//     commitment), with its field-element conversion and its serde JSON form;
//   - the protocol functions: replica id derivation, interactive challenge
//     derivation (v1.1), the labeling hash (SHA-256 truncated to 254 bits over
//     replica id, layer, node and parent labels) and replica encoding.
//
// Sub-packages: graph (DRG and expander parents), merkle (SHA-254 and Poseidon
// trees and inclusion proofs), c1 (the SealCommitPhase1Output JSON format),
// sealer (seals small sectors and writes C1), verifier (native vanilla-proof
// checks), stacked (rust-fil-proofs' StackedCircuit on pkg/r1cs), circuit
// (that circuit compiled per shape and synthesized from a C1 output),
// ceremony (Filecoin's parameter files), seal (verify_seal).
//
// This package does not hold hash primitives (pkg/poseidon, and the R1CS
// gadgets in pkg/gadget), the Groth16 engine (pkg/groth16) or anything
// about jobs and queues.
package porep
