package r1cs

import (
	"fmt"
	"strings"
)

// Name is an annotation (a variable's, a constraint's or a namespace's),
// formatted only by the implementations that keep names: a format with at
// most two %d verbs and their arguments. Building one allocates nothing.
type Name struct {
	format string
	a, b   int
	n      uint8
}

// N is a plain name.
func N(s string) Name { return Name{format: s} }

// Nf is a name with one %d verb ("bit %d").
func Nf(format string, a int) Name { return Name{format: format, a: a, n: 1} }

// Nf2 is a name with two %d verbs.
func Nf2(format string, a, b int) Name { return Name{format: format, a: a, b: b, n: 2} }

func (n Name) String() string {
	switch n.n {
	case 1:
		return fmt.Sprintf(n.format, n.a)
	case 2:
		return fmt.Sprintf(n.format, n.a, n.b)
	}
	return n.format
}

// path is a namespace stack, for the implementations that keep names.
type path struct {
	parts []string
}

func (p *path) push(n Name) { p.parts = append(p.parts, n.String()) }

func (p *path) pop() {
	if len(p.parts) == 0 {
		panic("r1cs: Pop without Push")
	}
	p.parts = p.parts[:len(p.parts)-1]
}

// String is the namespace's full name ("ns/ns").
func (p *path) String() string { return strings.Join(p.parts, "/") }

// join is the full name of n in the current namespace, bellperson's
// "ns/ns/name".
func (p *path) join(n Name) string {
	if len(p.parts) == 0 {
		return n.String()
	}
	return strings.Join(p.parts, "/") + "/" + n.String()
}
