package r1cs

import "fmt"

// Variable names an input or aux variable. Inputs sort before aux, each by
// index, which is the order of a linear combination's terms.
type Variable uint32

const auxBit = 1 << 31

// MaxIndex is the largest index of either kind.
const MaxIndex = auxBit - 1

// One is input 0, the constant one.
const One Variable = 0

// Input returns input variable i.
func Input(i int) Variable {
	if i < 0 || i > MaxIndex {
		panic(fmt.Sprintf("r1cs: input index %d out of range", i))
	}
	return Variable(i)
}

// Aux returns aux variable i.
func Aux(i int) Variable {
	if i < 0 || i > MaxIndex {
		panic(fmt.Sprintf("r1cs: aux index %d out of range", i))
	}
	return Variable(i) | auxBit
}

// IsInput reports whether v is an input.
func (v Variable) IsInput() bool { return v&auxBit == 0 }

// Index is v's index among the inputs or among the aux.
func (v Variable) Index() int { return int(v &^ auxBit) }

func (v Variable) String() string {
	if v.IsInput() {
		return fmt.Sprintf("I%d", v.Index())
	}
	return fmt.Sprintf("A%d", v.Index())
}
