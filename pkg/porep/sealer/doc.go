// Package sealer seals a sector of a porep.Shape in memory — tree D and
// comm_d, replica id, SDR labels of every layer, column hashes and tree C,
// the replica (data + last-layer key), tree R_last, comm_c, comm_r_last,
// comm_r = Poseidon(comm_c, comm_r_last) — and produces the vanilla proofs of
// commit phase 1 for the interactive (v1.1) challenges derived from a seed,
// returned as a c1.Output. WriteRandomC1 does all of it for random data and
// writes the C1 JSON, with progress lines.
//
// Everything is held in memory, so it is meant for the official 2 KiB and
// 8 MiB shapes and the test shapes. Proof generation reads the sector through
// the Source interface.
//
// For every shape, 32 GiB and 64 GiB included, SealSparse and WriteSparseC1
// produce a BENCHMARK INPUT instead of a sealed sector: an all-zero sector in
// which only the challenged nodes, their parents' columns and their Merkle
// paths have values (SparseSector, a Source over merkle.SparseTree). Its C1
// is schema-exact, passes verifier.Verify and satisfies the partition
// circuits, in seconds, but its comm_r commits to no replica; the progress
// output and SparseC1Help say so, the C1 itself cannot.
//
// It does not verify proofs (porep/verifier) or build circuits (porep/circuit).
package sealer
