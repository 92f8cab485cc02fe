package circuit

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// Parts is a circuit made of a head and Challenges() challenges that are
// the same sub-circuit: challenge i allocates as many inputs and aux
// variables and enforces the same constraints as challenge 0, on its own
// variables and the head's, never on another challenge's. rust-fil-proofs'
// StackedCircuit is one (pkg/porep/stacked).
type Parts interface {
	Challenges() int
	// Head synthesizes the head (ONE is allocated by the CS).
	Head(cs r1cs.CS) error
	// Challenge synthesizes challenge i, after Head on the same CS (or on
	// a CS whose next variables are those challenge i starts at).
	Challenge(cs r1cs.CS, i int) error
}

// Template is a partition circuit recorded once: its head and challenge 0.
// The whole circuit is the head followed by n copies of the challenge, copy
// i with its own variables shifted by i times the challenge's counts; the
// template replays it without recording it (a 32 GiB partition's 130 M
// constraints from the 7.2 M of one challenge).
type Template struct {
	sys *r1cs.System // head, then challenge 0

	n                         int // challenges
	headIn, headAux, headRows int
	chalIn, chalAux, chalRows int

	// The evaluation program: every stored term of the recording, its
	// variable by class (absolute input, absolute aux, input or aux
	// relative to its challenge's first) and its coefficient by kind.
	prog []eterm
	offs []uint32 // 3 per row + 1, into prog
}

// eterm is one term of the evaluation program: idx into its class's base,
// meta = coefficient kind (bits 0–1) | variable class (bits 2–3) |
// coefficient index << 4.
type eterm struct {
	idx  uint32
	meta uint32
}

const (
	kindOne      = 0
	kindMinusOne = 1
	kindOther    = 2

	classInput     = 0 // an input of the head (ONE included), absolute
	classAux       = 1 // an aux of the head, absolute
	classChalInput = 2 // an input of the challenge, from its first
	classChalAux   = 3 // an aux of the challenge, from its first
)

// Record synthesizes the head and challenge 0 of p into a System (made
// with opts) and returns the template.
func Record(p Parts, opts ...r1cs.SystemOption) (*Template, error) {
	n := p.Challenges()
	if n < 1 {
		return nil, fmt.Errorf("circuit: a circuit with %d challenges", n)
	}
	sys := r1cs.NewSystem(opts...)
	if err := p.Head(sys); err != nil {
		return nil, fmt.Errorf("circuit: recording the head: %w", err)
	}
	t := &Template{sys: sys, n: n, headIn: sys.NumInputs(), headAux: sys.NumAux(), headRows: sys.NumConstraints()}
	if err := p.Challenge(sys, 0); err != nil {
		return nil, fmt.Errorf("circuit: recording challenge 0: %w", err)
	}
	t.chalIn = sys.NumInputs() - t.headIn
	t.chalAux = sys.NumAux() - t.headAux
	t.chalRows = sys.NumConstraints() - t.headRows
	if err := t.compile(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Template) compile() error {
	coeffs := t.sys.Coeffs()
	rows := t.sys.NumConstraints()
	if uint64(t.sys.NumTerms()) >= 1<<32 {
		return fmt.Errorf("circuit: template of %d terms too large", t.sys.NumTerms())
	}
	t.prog = make([]eterm, 0, t.sys.NumTerms())
	t.offs = make([]uint32, 0, 3*rows+1)
	t.offs = append(t.offs, 0)
	one := fr.One()
	var minusOne fr.Element
	minusOne.Neg(&one)
	for j := range rows {
		a, b, c := t.sys.Row(j)
		inChal := j >= t.headRows
		for _, lc := range [3][]r1cs.STerm{a, b, c} {
			for _, x := range lc {
				kind := uint32(kindOther)
				switch {
				case coeffs[x.K].Equal(&one):
					kind = kindOne
				case coeffs[x.K].Equal(&minusOne):
					kind = kindMinusOne
				}
				idx, class := x.V.Index(), uint32(classAux)
				if x.V.IsInput() {
					class = classInput
				}
				if class == classInput && idx >= t.headIn {
					if !inChal {
						return fmt.Errorf("circuit: head constraint %d uses %v, allocated by a challenge", j, x.V)
					}
					class, idx = classChalInput, idx-t.headIn
				} else if class == classAux && idx >= t.headAux {
					if !inChal {
						return fmt.Errorf("circuit: head constraint %d uses %v, allocated by a challenge", j, x.V)
					}
					class, idx = classChalAux, idx-t.headAux
				}
				t.prog = append(t.prog, eterm{idx: uint32(idx), meta: kind | class<<2 | x.K<<4})
			}
			t.offs = append(t.offs, uint32(len(t.prog)))
		}
	}
	return nil
}

// NumInputs is the partition's inputs, ONE included.
func (t *Template) NumInputs() int { return t.headIn + t.n*t.chalIn }

// NumAux is the partition's aux variables.
func (t *Template) NumAux() int { return t.headAux + t.n*t.chalAux }

// NumConstraints is the partition's own constraints (without Groth16's
// input rows).
func (t *Template) NumConstraints() int { return t.headRows + t.n*t.chalRows }

// Challenges is the number of challenges.
func (t *Template) Challenges() int { return t.n }

// ChallengeStart returns where challenge i's inputs, aux variables and
// constraints start.
func (t *Template) ChallengeStart(i int) (input, aux, row int) {
	return t.headIn + i*t.chalIn, t.headAux + i*t.chalAux, t.headRows + i*t.chalRows
}

// Head returns the head's counts.
func (t *Template) Head() (inputs, aux, rows int) { return t.headIn, t.headAux, t.headRows }

// Challenge returns one challenge's counts.
func (t *Template) Challenge() (inputs, aux, rows int) { return t.chalIn, t.chalAux, t.chalRows }

// Recording is the recorded head and challenge 0.
func (t *Template) Recording() *r1cs.System { return t.sys }

// Row returns constraint j of the partition as stored terms of the
// recording's coefficient table, its variables shifted to the partition's
// numbering; dst's storage is reused.
func (t *Template) Row(j int, dst *[3][]r1cs.STerm) {
	r, i := j, -1
	if j >= t.headRows {
		i = (j - t.headRows) / t.chalRows
		r = t.headRows + (j-t.headRows)%t.chalRows
	}
	a, b, c := t.sys.Row(r)
	for k, lc := range [3][]r1cs.STerm{a, b, c} {
		dst[k] = dst[k][:0]
		for _, x := range lc {
			if i > 0 {
				x.V = t.shift(x.V, i)
			}
			dst[k] = append(dst[k], x)
		}
	}
}

// shift moves a variable of challenge 0 to challenge i.
func (t *Template) shift(v r1cs.Variable, i int) r1cs.Variable {
	if v.IsInput() {
		if v.Index() >= t.headIn {
			return r1cs.Input(v.Index() + i*t.chalIn)
		}
		return v
	}
	if v.Index() >= t.headAux {
		return r1cs.Aux(v.Index() + i*t.chalAux)
	}
	return v
}

// Hash is the partition's bellpepper TestConstraintSystem hash, over every
// constraint replayed: blocks of rows are encoded on every core and hashed
// in order (a 32 GiB partition streams ~30 GB through blake2s). progress,
// if not nil, gets the rows done so far now and then.
func (t *Template) Hash(ctx context.Context, progress func(done, total int)) ([32]byte, error) {
	total := t.NumConstraints()
	x := r1cs.NewHasher(t.NumInputs(), t.NumAux(), total, t.sys.Coeffs())
	const block = 1 << 14
	nb := (total + block - 1) / block
	nw := workers()
	results := make([]chan []byte, nb)
	for i := range results {
		results[i] = make(chan []byte, 1)
	}
	window := make(chan struct{}, 2*nw) // blocks encoded and not yet hashed
	var pool sync.Pool
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		var wg sync.WaitGroup
		next := make(chan int)
		for range nw {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var row [3][]r1cs.STerm
				for i := range next {
					buf, _ := pool.Get().([]byte)
					buf = buf[:0]
					for j := i * block; j < min(total, (i+1)*block); j++ {
						t.Row(j, &row)
						buf = x.AppendRow(buf, row[0], row[1], row[2])
					}
					results[i] <- buf
				}
			}()
		}
	dispatch:
		for i := range nb {
			select {
			case window <- struct{}{}:
			case <-stop:
				break dispatch
			}
			next <- i
		}
		close(next)
		wg.Wait()
	}()
	for i := range nb {
		var buf []byte
		select {
		case buf = <-results[i]:
		case <-ctx.Done():
			return [32]byte{}, ctx.Err()
		}
		x.Write(buf, min(total, (i+1)*block)-i*block)
		pool.Put(buf[:0]) //nolint:staticcheck // a slice header is fine here
		<-window
		if progress != nil && i%64 == 0 {
			progress(i*block, total)
		}
	}
	if progress != nil {
		progress(total, total)
	}
	return x.Sum(), nil
}

// Terms calls f for every term of matrix m (0 = A, 1 = B, 2 = C) of every
// constraint in order, variables in the partition's numbering, and stops
// at f's first error (groth16.R1CS).
func (t *Template) Terms(m int, f func(row int, v r1cs.Variable, c *fr.Element) error) error {
	if m < 0 || m > 2 {
		return fmt.Errorf("circuit: matrix %d (want 0, 1 or 2)", m)
	}
	coeffs := t.sys.Coeffs()
	var row [3][]r1cs.STerm
	for j := range t.NumConstraints() {
		t.Row(j, &row)
		for _, x := range row[m] {
			if err := f(j, x.V, &coeffs[x.K]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Densities are the variables bellperson's prover marks: an aux variable
// in some A combination, an input or aux variable in some B combination,
// with a non-zero coefficient (bellperson's eval_with_trackers skips a
// term whose coefficient cancelled to zero). Every input is in A through
// its input row.
type Densities struct {
	AAux, BInput, BAux []bool
}

// Densities computes the partition's densities.
func (t *Template) Densities() Densities {
	d := Densities{AAux: make([]bool, t.NumAux()), BInput: make([]bool, t.NumInputs()), BAux: make([]bool, t.NumAux())}
	var wg sync.WaitGroup
	for m, marks := range [2]struct{ in, aux []bool }{{nil, d.AAux}, {d.BInput, d.BAux}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.mark(m, marks.in, marks.aux)
		}()
	}
	wg.Wait()
	return d
}

func (t *Template) mark(m int, in, aux []bool) {
	rows := t.sys.NumConstraints()
	coeffs := t.sys.Coeffs()
	for j := range rows {
		a, b, _ := t.sys.Row(j)
		lc := a
		if m == 1 {
			lc = b
		}
		for _, x := range lc {
			if coeffs[x.K].IsZero() {
				continue
			}
			if x.V.IsInput() {
				if in == nil {
					continue
				}
				if j < t.headRows || x.V.Index() < t.headIn {
					in[x.V.Index()] = true
					continue
				}
				for i := range t.n {
					in[x.V.Index()+i*t.chalIn] = true
				}
				continue
			}
			if j < t.headRows || x.V.Index() < t.headAux {
				aux[x.V.Index()] = true
				continue
			}
			for i := range t.n {
				aux[x.V.Index()+i*t.chalAux] = true
			}
		}
	}
}

// workers is GOMAXPROCS.
func workers() int { return runtime.GOMAXPROCS(0) }
