package porep

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ProverID is the prover id of a miner actor, as filecoin-ffi's toProverID
// makes it: the payload of the actor's ID address (the actor id as an
// unsigned LEB128 varint) zero-padded to 32 bytes.
func ProverID(actorID uint64) [32]byte {
	var out [32]byte
	binary.PutUvarint(out[:], actorID)
	return out
}

// ReplicaID derives the replica id as rust-fil-proofs' generate_replica_id:
// SHA-256(prover_id ‖ sector_id (u64 big-endian) ‖ ticket ‖ comm_d ‖ porep_id),
// truncated to 254 bits.
func ReplicaID(proverID [32]byte, sectorID uint64, ticket [32]byte, commD Domain, porepID [32]byte) Domain {
	h := sha256.New()
	h.Write(proverID[:])
	var sid [8]byte
	binary.BigEndian.PutUint64(sid[:], sectorID)
	h.Write(sid[:])
	h.Write(ticket[:])
	h.Write(commD[:])
	h.Write(porepID[:])
	var d Domain
	h.Sum(d[:0])
	d.TruncateTo254()
	return d
}

// Challenges derives the interactive (v1.1) challenges of partition k as
// storage-proofs-porep InteractiveChallenges::derive: for i in
// 0..ChallengesPerPartition, j = ChallengesPerPartition·k + i (u32),
// challenge = 1 + (LE-integer(SHA-256(replica_id ‖ seed ‖ j as u32 LE)) mod (nodes − 1)).
// Node 0 is never challenged.
func Challenges(s *Shape, replicaID Domain, seed [32]byte, k int) []uint64 {
	out := make([]uint64, s.ChallengesPerPartition)
	mod := new(big.Int).SetUint64(s.Nodes - 1)
	var v, r big.Int
	var be [32]byte
	for i := range out {
		j := uint32(s.ChallengesPerPartition*k + i)
		h := sha256.New()
		h.Write(replicaID[:])
		h.Write(seed[:])
		var jb [4]byte
		binary.LittleEndian.PutUint32(jb[:], j)
		h.Write(jb[:])
		sum := h.Sum(nil)
		for b := range 32 { // little-endian digest → big-endian for big.Int
			be[b] = sum[31-b]
		}
		v.SetBytes(be[:])
		r.Mod(&v, mod)
		out[i] = r.Uint64() + 1
	}
	return out
}

// LabelPrefix is the first 64-byte block of every labeling hash: replica id,
// layer (u32 big-endian), node (u64 big-endian), 20 zero bytes.
func LabelPrefix(replicaID Domain, layer uint32, node uint64) [64]byte {
	var b [64]byte
	copy(b[:32], replicaID[:])
	binary.BigEndian.PutUint32(b[32:36], layer)
	binary.BigEndian.PutUint64(b[36:44], node)
	return b
}

// LabelHash is the labeling hash of storage-proofs-porep (create_label and
// LabelingProof::create_label): SHA-256 over LabelPrefix and then the given
// parent labels in order, truncated to 254 bits. Callers pass the parent list
// already repeated to Shape.LabelParents entries; node 0 is labeled with no
// parents at all.
func LabelHash(replicaID Domain, layer uint32, node uint64, parents []Domain) Domain {
	h := sha256.New()
	p := LabelPrefix(replicaID, layer, node)
	h.Write(p[:])
	for i := range parents {
		h.Write(parents[i][:])
	}
	var d Domain
	h.Sum(d[:0])
	d.TruncateTo254()
	return d
}

// RepeatParents fills dst (len = Shape.LabelParents) with parents repeated
// cyclically, as the sealer's copy_parents_data and the vanilla prover do.
func RepeatParents(dst, parents []Domain) {
	for i := range dst {
		dst[i] = parents[i%len(parents)]
	}
}

// Encode returns data + key in the scalar field: the replica node.
func Encode(data, key Domain) (Domain, error) {
	d, err := data.Element()
	if err != nil {
		return Domain{}, fmt.Errorf("porep: encode data node: %w", err)
	}
	k, err := key.Element()
	if err != nil {
		return Domain{}, fmt.Errorf("porep: encode key: %w", err)
	}
	var r fr.Element
	r.Add(&d, &k)
	return DomainFromElement(&r), nil
}
