package merkle

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/poseidon"
)

// Poseidon is the node rule of trees C and R_last (PoseidonFunction
// multi_node): Filecoin's Poseidon with arity = number of children and the
// Merkle-tree domain tag. The same function hashes a column (arity = layers,
// hash_single_column) and composes comm_r = H(comm_c, comm_r_last).
type Poseidon struct{}

// HashNode implements Hasher. Children must be canonical field elements.
func (Poseidon) HashNode(children []porep.Domain) (porep.Domain, error) {
	var buf [16]fr.Element
	var elems []fr.Element
	if len(children) <= len(buf) {
		elems = buf[:len(children)]
	} else {
		elems = make([]fr.Element, len(children))
	}
	for i := range children {
		e, err := children[i].Element()
		if err != nil {
			return porep.Domain{}, fmt.Errorf("merkle: poseidon input %d: %w", i, err)
		}
		elems[i] = e
	}
	h := poseidon.Hash(elems)
	return porep.DomainFromElement(&h), nil
}
