package merkle

import (
	"crypto/sha256"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// Hasher hashes the children of one tree node into the node.
type Hasher interface {
	// HashNode hashes children (len = the arity at that level).
	HashNode(children []porep.Domain) (porep.Domain, error)
}

// SHA254 is rust-fil-proofs' Sha256Function node rule (multi_node): SHA-256
// of the children's bytes concatenated, top two bits of the digest cleared.
// Tree D uses it with arity 2.
type SHA254 struct{}

// HashNode implements Hasher.
func (SHA254) HashNode(children []porep.Domain) (porep.Domain, error) {
	h := sha256.New()
	for i := range children {
		h.Write(children[i][:])
	}
	var d porep.Domain
	h.Sum(d[:0])
	d.TruncateTo254()
	return d, nil
}
