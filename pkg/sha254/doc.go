// Package sha254 is Filecoin's SHA-254: SHA-256 whose 32-byte digest is read
// as the little-endian encoding of a BLS12-381 scalar and truncated to 254
// bits by clearing the two most significant bits of the last byte
// (rust-fil-proofs' Sha256Domain::trim_to_fr32). The result is always a
// canonical field element (< 2^254 < r).
//
// Natively it wraps crypto/sha256 (Sum, Truncate, ToElement). In circuits it
// provides SHA-256 as boolean R1CS constraints for gnark's frontend, built the
// way bellman/bellperson build it, with no commitments and no lookup tables
// (gnark's std/hash/sha2 needs a commitment, which the Groth16 parameters of
// this project cannot carry):
//   - every bit is a boolean wire, constant bits are folded at compile time;
//   - XOR, Ch and Maj are one-constraint boolean formulas per bit (Maj two);
//   - a 32-bit addition allocates the sum's bits plus carries as booleans
//     and checks them against the packed operands; several such equalities
//     share one constraint (bellman's MultiEq), packed side by side below
//     the field's capacity.
//
// Circuit works on bits in SHA's own order (byte 0's most significant bit
// first) and pads the message itself. FieldToBits / FieldToBitsRelaxed turn a
// field element into the 256 bits SHA consumes for its 32-byte little-endian
// encoding, and DigestToField turns a digest back into the truncated field
// element.
//
// The package does not hold Merkle trees or the PoRep labeling layout.
package sha254
