// Package graph computes the parents of stacked-DRG nodes exactly as
// rust-fil-proofs does: DRG parents by bucket sampling (storage-proofs-core
// drgraph.rs, BucketGraph) seeded per node from a ChaCha8 stream keyed by the
// porep id, and expander parents from a keyed 3-round Feistel permutation
// (storage-proofs-core crypto/feistel.rs, storage-proofs-porep stacked graph.rs).
//
// A Graph for a shape is built once and cached (For); for sectors up to
// CacheMaxNodes it also precomputes every node's parents.
//
// It does not hold labels, trees or hashing of node data.
package graph
