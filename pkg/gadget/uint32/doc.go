// Package uint32 is bellpepper's UInt32 on pkg/r1cs: a 32-bit word as 32
// Booleans (least significant first) with its value; constants,
// allocation, rotations and shifts (no constraints), xor, SHA-256's ch and
// maj, and modular addition of several words (AddMany), whose equalities
// MultiEq batches into shared constraints. Variables, constraints,
// coefficients and names are bellperson 0.27's, in its order.
//
// Importers shadow the builtin uint32 with this package's name; they
// usually import it as u32.
//
// It does not hold the SHA-256 circuit (pkg/gadget/sha256).
package uint32
