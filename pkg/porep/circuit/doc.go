// Package circuit is the PoRep partition circuit: rust-fil-proofs' v1.1
// StackedCircuit written with gnark's frontend, compiled to plain R1CS over
// BLS12-381 (no commitments), and its synthesis from a C1 output.
//
// One partition proves Challenges challenged nodes. For each it checks, as
// constraints, everything the vanilla proof shows:
//   - the data leaf is in tree D (binary SHA-254, root comm_d);
//   - every DRG and expander parent's column hashes (Poseidon, arity =
//     layers) into tree C (root comm_c, the shape's arities);
//   - the challenged node's label in every layer is SHA-256 over the exact
//     labeling preimage (replica id, layer, node, the parents' labels cycled
//     to LabelParents entries), truncated to 254 bits;
//   - the replica node (data + last label) is in tree R_last (root
//     comm_r_last), and the column of the computed labels is in tree C;
//   - comm_r = Poseidon(comm_c, comm_r_last).
//
// The public inputs are StackedCircuit's, in its order: replica_id, comm_d,
// comm_r, then per challenge the packed path index of the tree-D proof, of
// each DRG and expander parent's tree-C proof, the challenge, and the path
// indexes of the tree-R_last and tree-C proofs (328 with the one for 32 GiB).
//
// Entry points: ForShape compiles a shape's circuit once per process
// (concurrency-safe) and returns a Compiled, whose Synthesize turns a parsed
// C1 output and a partition index into the *groth16.Synthesized the provers
// take. Compiling does not run gnark's frontend on the whole partition: it
// compiles a head template (replica_id bits, comm_r check) and one challenge
// template, and assembles the partition's R1CS by replaying the challenge's
// instructions once per challenge with renamed wires (template.go). The
// result is the system the frontend would compile, instruction for
// instruction, in a fraction of the time and memory (32 GiB: ~2 minutes and
// ~17 GB instead of 10–15 minutes and ~50 GB).
//
// Synthesize does not run gnark's solver on the whole partition either
// (its parallel solver spends ~10x the CPU of one core on it at 32 GiB): it
// solves the head template, then the challenge template once per challenge,
// the challenges concurrently and each single-threaded, with its own solver
// that reads and writes the wires and constraint rows each use was renamed
// to directly in the partition's vectors (solve.go: gnark's solving rules,
// no per-solve allocation or copy), swapping A and B where balanceB turned a
// constraint (synthesize.go). The result is gnark's whole-system solution
// byte for byte (TestSynthesizePerTemplate).
//
// PublicInputs computes a partition's public inputs natively, for the
// verifier. Setup compiles a shape, runs the Groth16 setup and writes its
// .params and .vk files and, when asked, the compiled circuit's
// Fingerprint, which caches and workers check parameters against
// (CheckFingerprint, ErrStaleParams). CountBreakdown splits the constraint
// count by gadget (exactly: it adds up to the compiled count), which
// extrapolates to shapes too large to compile here; BellpersonBreakdown is
// the same split of rust-fil-proofs' circuit on bellperson.
//
// The package does not hold the hashes (pkg/poseidon, pkg/sha254), the
// sealer, the C1 format or the native verifier (pkg/porep/...), or the
// Groth16 engine (pkg/groth16).
package circuit
