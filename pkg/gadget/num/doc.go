// Package num is bellpepper-core's field-element gadgets on pkg/r1cs:
// AllocatedNum (a variable holding one field element, with its value) and
// Num (a linear combination with its value), allocated and constrained in
// bellperson's exact order, names and coefficients, and what joins them
// to bits (ToBitsLE, ToBitsLEStrict, ConditionallyReverse,
// Num.AddBoolWithCoeff).
//
// It does not hold the bit gadgets themselves (pkg/gadget/boolean) or
// hashes.
package num
