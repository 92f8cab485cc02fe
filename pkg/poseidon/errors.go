package poseidon

import (
	"errors"
	"fmt"
)

// MaxArity is the largest supported arity (inputs per hash).
const MaxArity = 16

// ErrArity is wrapped by every error about an unsupported arity or a wrong
// number of inputs.
var ErrArity = errors.New("poseidon: unsupported arity")

func arityError(arity int) error {
	return fmt.Errorf("%w: %d inputs (supported: 1..%d)", ErrArity, arity, MaxArity)
}
