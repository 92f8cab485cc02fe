// Package stacked is rust-fil-proofs' PoRep partition circuit,
// storage-proofs-porep's StackedCircuit (API v1.1), on pkg/r1cs: the R1CS
// Filecoin's ceremony parameters were made for, built with bellperson's
// variables, constraints, coefficients and namespace names in its order,
// for the official shapes and, with the same code parameterised by the
// Shape (layers, degrees, label parents, tree arities, nodes), for
// c2cluster's test shapes.
//
// A Circuit is one partition's instance: Blank (zeros, as
// StackedCompound::blank_circuit; the structure never depends on values)
// or FromC1 (partition k of a parsed C1 output, as StackedCompound::circuit).
// Synthesize builds it under the namespace "stacked drgporep" (Namespace),
// as the reference does: Head (replica id, comm_d and comm_r as public
// inputs, comm_r_last, comm_c, and comm_r = Poseidon(comm_c, comm_r_last)),
// then Challenge(i) for every challenge, each in "challenge_i". Head and
// Challenge push no namespace of their own beyond "challenge_i": a caller
// that calls them directly and wants the reference's names pushes
// Namespace first. Challenge i uses only the Head's variables and its own,
// so challenges can be generated independently once the Head is known.
//
// Errors: an instance that does not fit its shape (counts, lengths, path
// layouts) is an error naming the field; values that do not satisfy the
// circuit are left to the constraint system (r1cs.System.Satisfied).
//
// The package does not hold the gadgets (pkg/gadget/...), the native
// protocol (pkg/porep, pkg/porep/verifier) or the Groth16 prover.
package stacked
