// Package multipack is bellpepper's multipack on pkg/r1cs: bits packed
// into public inputs, fr.Bits − 1 (254) bits per input (PackIntoInputs),
// or into one allocated number (PackBits), in bellperson's order, names
// and coefficients; and the native side a verifier uses to compute those
// inputs (BytesToBits, BytesToBitsLE, ComputeMultipacking).
//
// It does not hold the bit gadgets (pkg/gadget/boolean).
package multipack
