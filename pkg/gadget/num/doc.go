// Package num is bellpepper-core's field-element gadgets on pkg/r1cs:
// AllocatedNum (a variable holding one field element, with its value) and
// Num (a linear combination with its value), allocated and constrained in
// bellperson's exact order, names and coefficients.
//
// It does not hold bits (pkg/gadget/boolean) or hashes.
package num
