// Package r1cs is a rank-1 constraint system with bellperson's semantics:
// the constraint system Filecoin's ceremony parameters were made for is a
// function of the exact variables, constraints and coefficients a circuit
// builds under bellperson (bellpepper-core), so circuits that must prove
// under those parameters are written against this package.
//
// The model, as in bellpepper-core:
//   - variables are inputs (public; input 0 is the constant ONE, allocated
//     by whoever synthesizes) or aux (private), each numbered in allocation
//     order (Variable);
//   - a linear combination (LC) keeps one term per variable, inputs before
//     aux, each by index; adding a variable already present adds to its
//     coefficient, and a term whose coefficient becomes zero stays (as in
//     bellpepper; the prover's densities and the hash skip it);
//   - Enforce appends the constraint a · b = c; namespaces only name things.
//
// CS is the interface circuits are written against. Its implementations:
//   - System records a circuit's constraints in a compact form (and, when
//     asked, variable values and constraint names): the circuit's shape, its
//     counts and densities, bellpepper's TestConstraintSystem hash (Hash,
//     Hasher), the oracle dump format (WriteDump), and a satisfaction check
//     (Satisfied) that names the first failing constraint; Terms streams
//     one matrix's terms, the form pkg/groth16's setup reads (groth16.R1CS);
//   - Witness only stores values, for generating the assignment of a
//     circuit whose constraints are already known; Constraints() is false,
//     so gadgets may skip building linear combinations.
//
// Values are always given at allocation (a blank circuit allocates zeros);
// gadgets carry their variables' values themselves and never read them back
// from the CS.
//
// The package does not hold gadgets (pkg/gadget/...), circuits (pkg/porep)
// or the Groth16 engine (pkg/groth16).
package r1cs
