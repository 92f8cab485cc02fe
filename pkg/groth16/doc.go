// Package groth16 is c2cluster's circuit-agnostic Groth16 engine over
// BLS12-381.
//
// Its boundary is a synthesized circuit instance (Synthesized): the constraint
// evaluations a, b, c, the input and aux assignments and the A/B density
// bitmaps. Anything that produces one (the PoRep synthesizer in pkg/porep, a
// bellperson-compatible synthesizer later) can be proved by any Backend.
//
// The package holds:
//   - the types: Synthesized, ProvingKey, VerifyingKey, Proof;
//   - the Filecoin/bellperson parameter formats (.params, .vk) and the
//     192-byte proof encoding;
//   - setup from a compiled gnark R1CS, with bellperson's input constraints;
//   - the staged Backend interface and its CPU implementation (the reference);
//   - the verifier, for one proof and for a batch.
//
// It does not hold circuits (pkg/porep), device code (cuda/ and its binding)
// or anything about queues and jobs.
package groth16
