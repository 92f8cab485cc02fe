// Package partition turns a PoRep partition circuit written on pkg/r1cs
// into what the Groth16 provers take, fast enough for a 32 GiB partition
// (130 M constraints) on every proof.
//
// A Template records the circuit once: its head and its first challenge
// (Record). Every challenge of rust-fil-proofs' StackedCircuit builds the
// same constraints on its own variables, so the partition is the head and
// n shifted copies of that challenge; the template replays it for the
// partition's counts, densities, bellpepper hash (Hash) and the setup's
// matrices (Terms), and evaluates every constraint's A, B and C over an
// assignment in one pass per challenge (Evaluate), checking A·B = C.
//
// The package does not hold the circuit (pkg/porep/stacked), the gadgets
// (pkg/gadget/...) or the Groth16 engine (pkg/groth16).
package partition
