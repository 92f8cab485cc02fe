// Package boolean is bellpepper-core's bit gadgets on pkg/r1cs:
// AllocatedBit (a variable constrained to 0 or 1, with its value), Boolean
// (an allocated bit, its negation, or a constant), the gates between them
// (xor, and, or, SHA-256's ch and maj) with every constant-folding case
// bellperson has, and the decompositions of a u64 or a field element into
// allocated bits. Variables, constraints, coefficients and names are
// bellperson 0.27's (bellpepper-core 0.2.1), in its order.
//
// Values are always known: a gadget computes them as it allocates, and a
// blank circuit passes zeros.
//
// It does not hold numbers (pkg/gadget/num), words (pkg/gadget/uint32) or
// hashes.
package boolean
