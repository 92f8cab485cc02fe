// Package sha256 is bellpepper's SHA-256 circuit on pkg/r1cs: the hash
// with its padding (Hash), one block without padding (BlockNoPadding),
// and the compression function (Compress), over Booleans most significant
// bit first, with bellperson 0.27's variables, constraints, coefficients
// and names in its order (the additions' equalities batched by a
// uint32.MultiEq per compression).
//
// On a witness generator (Constraints false) that allocates in bulk
// (r1cs.Bulk), Compress computes the compression's aux values natively
// with word arithmetic and writes them through AllocAux, in the order and
// with the values the gadget path allocates.
//
// It does not hold other hashes or the bit gadgets (pkg/gadget/boolean,
// pkg/gadget/uint32).
package sha256
