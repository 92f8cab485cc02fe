// Package ceremony finds and checks Filecoin's official PoRep Groth16
// parameter files: the .params and .vk files of the v28 parameter set that
// Filecoin's trusted-setup ceremony produced and `lotus fetch-params` /
// `curio fetch-params` download.
//
// It holds:
//   - the official file names of the PoRep v1.1 shapes (2KiB, 8MiB, 512MiB,
//     32GiB, 64GiB) and their entries of rust-fil-proofs' parameters.json
//     (cid, digest, sector size), embedded (ForShape);
//   - the parameter directory operators use ($FIL_PROOFS_PARAMETER_CACHE,
//     default /var/tmp/filecoin-proof-parameters) and Locate, whose errors
//     name the missing file and the command that fetches it;
//   - the digest rule of Filecoin's parameter tools (BLAKE2b-512 of the
//     whole file, lowercase hex of its first 16 bytes), streamed with
//     progress (Digest, FileDigest);
//   - Check: a file's digest against parameters.json and every point of it
//     (canonical, on the curve, in the subgroup), done once and recorded in a
//     marker (<file>.c2checked, or in a state directory when the parameter
//     directory is read-only) that later starts reuse after a stat;
//   - CheckCounts: a parameter file's section lengths against a circuit's
//     numbers (Counts), so a file of another circuit is refused before
//     proving;
//   - ConvertH and LoadHFile: a .params file's key converted once to
//     coset-Lagrange form (groth16.ConvertHCosetLagrange) and kept in an H
//     file (<file>.c2hfile, or in a state directory) bound to the source's
//     size and digest; a stale or damaged one is refused, never used.
//
// It does not download anything, decode proving keys for proving
// (pkg/groth16 does) or hold circuits (pkg/porep/...). docs/parameters.md
// is the operator's guide.
package ceremony
