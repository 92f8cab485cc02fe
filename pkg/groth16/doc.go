// Package groth16 is c2cluster's circuit-agnostic Groth16 engine over
// BLS12-381, in Filecoin's (bellperson's) flavour.
//
// Its boundary is a synthesized circuit instance (Synthesized): the constraint
// evaluations a, b, c, the input and aux assignments and the A/B density
// bitmaps. Anything that produces one (the PoRep synthesizer in pkg/porep,
// SynthesizeSystem for a pkg/r1cs System) can be proved by any Backend.
// SetupR1CS's boundary is a constraint system (R1CS): a *r1cs.System, or
// the PoRep partition circuit replayed from templates.
//
// The package holds:
//   - the types: Synthesized, ProvingKey, VerifyingKey, Proof, Randomness;
//   - the Filecoin/bellperson parameter formats: ReadParams / OpenParams
//     (memory-mapped, counts checked against the file size, sections decoded
//     lazily or all in parallel, every point checked for canonical encoding,
//     curve and subgroup membership; SkipSubgroupCheck for trusted files),
//     WriteParams, ReadVerifyingKey / WriteVerifyingKey, and the 192-byte
//     proof encoding (Proof.MarshalBinary / UnmarshalBinary, JoinProofs /
//     SplitProofs for multi-partition proofs). Decoding errors are
//     *FormatError values naming the section (vk, ic, h, l, a, b_g1, b_g2),
//     the point and the problem (ErrTruncated, ErrNotOnCurve, ...);
//   - the constraint-system boundary of setup: R1CS (counts and a stream
//     of each matrix's terms, implemented by pkg/r1cs's System and by
//     circuits replayed from templates), Densities, and SynthesizeSystem,
//     the reference synthesis of a small r1cs.System with values;
//   - SetupR1CS: parameters and densities for an R1CS with bellperson's
//     generator rules (input rows input_i · 0 = 0, A and B without the
//     identity points, unconstrained variables refused, ErrUnconstrainedVariable),
//     the prover's densities checked against the key's (ErrDensityMismatch),
//     fresh toxic waste or a test seed, progress reports, either H form;
//   - Circuit, what the engine keeps of a circuit's structure: its counts
//     and density bitmaps, read from an R1CS's terms (CircuitOf) or
//     computed elsewhere (NewCircuit); it wraps a solution written elsewhere as a Synthesized
//     (Circuit.Synthesized) and sizes the reusable instance buffers of a
//     BufferPool (Circuit.SynthesizedBuffers);
//   - the staged Backend / Key / Task interface and its CPU implementation
//     (NewCPUBackend), the reference every backend must match byte for byte,
//     and Prove, which runs every stage;
//   - the verifier: Verify for one proof, PreparedVerifyingKey for many, and
//     VerifyBatch (random linear combination, one final exponentiation) for
//     the partition proofs of a sector.
//
// It does not hold circuits (pkg/porep), device code (cuda/ and its Go
// binding in pkg/groth16/cuda) or anything about queues and jobs.
//
// Everything that reads outside bytes returns errors, never panics, and is
// fuzzed (see fuzz_test.go). See docs/groth16.md for the formats and the
// prover's stages, and docs/perf/README.md for measurements.
package groth16
