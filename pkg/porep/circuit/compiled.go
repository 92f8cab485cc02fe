package circuit

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
)

// Errors callers branch on. Both mean the input can never be proved as it is
// (a worker terminates the task instead of retrying it).
var (
	// ErrInvalidInput: the C1 output or partition index does not fit the
	// compiled shape (wrong shape, missing or misshapen proofs, out-of-range
	// partition, values that are not field elements).
	ErrInvalidInput = errors.New("circuit: invalid input")
	// ErrUnsatisfied: the witness was built but violates a constraint: some
	// check of the vanilla proof fails.
	ErrUnsatisfied = errors.New("circuit: witness does not satisfy the partition circuit")
)

// Compiled is the compiled partition circuit of one shape: the gnark R1CS
// wrapped for the Groth16 engine (densities computed once). It is immutable
// and safe for concurrent use; ForShape shares one per shape per process.
type Compiled struct {
	params  Params
	circuit *groth16.Circuit
	compile time.Duration
	// templates are the compiled head and challenge templates and where
	// their uses lie, and turned the constraints balanceB turned: what
	// Synthesize solves per template use (nil when compiled whole with the
	// frontend: Synthesize then runs gnark's solver on the whole system).
	templates *replayed
	turned    turnedSet

	fingerprintOnce sync.Once
	fingerprint     string
}

// ParamsOf returns the circuit dimensions of a porep shape.
func ParamsOf(s *porep.Shape) (Params, error) {
	if s == nil {
		return Params{}, fmt.Errorf("%w: nil shape", ErrInvalidInput)
	}
	if err := s.Validate(); err != nil {
		return Params{}, err
	}
	p := Params{
		Name: s.Name, Nodes: s.Nodes, Layers: s.Layers,
		DRGDegree: s.BaseDegree, ExpDegree: s.ExpDegree, LabelParents: s.LabelParents,
		Challenges: s.ChallengesPerPartition,
		Tree:       TreeArity{Base: s.Tree.Base, Sub: s.Tree.Sub, Top: s.Tree.Top},
	}
	return p, p.Validate()
}

// Option configures ForShape and Compile.
type Option func(*options)

type options struct {
	progress groth16.Progress
	// keepB skips balanceB (tests compare both orientations).
	keepB bool
	// frontend compiles the whole partition circuit with gnark's frontend
	// instead of assembling it from templates: the tests' oracle (and the
	// way it was done before; ~400 B of heap per constraint at its peak).
	frontend bool
	// wholeSolve makes Synthesize run gnark's solver on the whole partition
	// system (as before the per-template solve; the tests' oracle).
	wholeSolve bool
	// buffers is where Synthesize takes the instance's vectors from.
	buffers *groth16.BufferPool
	// cpuTime receives the CPU time of Synthesize's own threads.
	cpuTime *time.Duration
}

// WithProgress reports long stages (compiling, solving) to p.
func WithProgress(p groth16.Progress) Option { return func(o *options) { o.progress = p } }

// WithBuffers makes Synthesize solve into a set of buffers taken from pool
// (groth16.NewBufferPool of this circuit's Circuit(); it waits for one when
// the pool is at its limit) instead of allocating ~16 GiB per 32 GiB
// partition. The returned instance owns the set: the caller gives it back
// with Synthesized.Release once the proof no longer reads the witness
// (groth16.WitnessHolder; after the task's Release at the latest). A failed
// synthesis gives it back itself. Only the per-template solve uses the pool
// (the tests' whole-system oracle allocates as gnark's solver does).
func WithBuffers(pool *groth16.BufferPool) Option { return func(o *options) { o.buffers = pool } }

// WithCPUTime makes Synthesize store in d the CPU time (user + system) its
// own threads spent on the partition: building the witness, solving the
// templates, summed over the goroutines that
// did it (each locked to its OS thread while it works). Unlike the
// process's CPU time it stays exact while other partitions are synthesized
// in the same process. d is set to 0 where a thread's CPU time cannot be
// read (only Linux can) and for the whole-system solve (gnark's own
// goroutines).
func WithCPUTime(d *time.Duration) Option { return func(o *options) { o.cpuTime = d } }

// NewBufferPool returns a pool of this circuit's partition buffers holding
// at most limit sets (see WithBuffers).
func (c *Compiled) NewBufferPool(limit int) *groth16.BufferPool {
	return groth16.NewBufferPool(c.circuit, limit)
}

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if o.progress == nil {
		o.progress = func(string, int64, int64) {}
	}
	return o
}

// cache holds one compiled circuit per Params for the whole process. A
// failed compilation is cached too: it is a property of the parameters.
var cache = struct {
	mu sync.Mutex
	m  map[Params]*cacheEntry
}{m: map[Params]*cacheEntry{}}

type cacheEntry struct {
	done chan struct{}
	c    *Compiled
	err  error
}

// ForShape returns the compiled circuit of shape s, compiling it on first use.
// Concurrent callers for the same shape wait for one compilation.
func ForShape(s *porep.Shape, opts ...Option) (*Compiled, error) {
	p, err := ParamsOf(s)
	if err != nil {
		return nil, err
	}
	return forParams(p, opts...)
}

func forParams(p Params, opts ...Option) (*Compiled, error) {
	cache.mu.Lock()
	e, ok := cache.m[p]
	if !ok {
		e = &cacheEntry{done: make(chan struct{})}
		cache.m[p] = e
	}
	cache.mu.Unlock()
	if ok {
		<-e.done
		return e.c, e.err
	}
	e.c, e.err = Compile(p, opts...)
	close(e.done)
	return e.c, e.err
}

// Compile compiles the circuit of p without the process-wide cache (ForShape
// is what a worker wants).
//
// It runs gnark's frontend on two small templates only, the head and one
// challenge, and assembles the partition's R1CS from them (template.go):
// the same constraint system as compiling the whole circuit, in a fraction of
// the time and memory. Progress reports the stage "circuit: compile <shape>"
// in Challenges + 2 steps: the templates, each challenge assembled, and the
// B balancing with the density bitmaps.
func Compile(p Params, opts ...Option) (*Compiled, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	o := collect(opts)
	stage := "circuit: compile " + p.Name
	total := int64(p.Challenges + 2)
	o.progress(stage, 0, total)
	start := time.Now()
	var r *cs.R1CS
	var tmpl *replayed
	var err error
	if o.frontend {
		r, err = compileFrontend(p)
	} else {
		r, tmpl, err = assemble(p, func(done int) { o.progress(stage, int64(done), total) })
	}
	if err != nil {
		return nil, err
	}
	var turned turnedSet
	if o.keepB {
		turned = newTurnedSet(r.GetNbConstraints()) // none
	} else {
		turned = balanceBTurned(r)
	}
	gc, err := groth16.NewCircuit(r)
	if err != nil {
		return nil, fmt.Errorf("circuit: compile %q: %w", p.Name, err)
	}
	if got := gc.NumInputs() - 1; got != p.NumPublic() {
		return nil, fmt.Errorf("circuit: compile %q: %d public inputs, want %d", p.Name, got, p.NumPublic())
	}
	o.progress(stage, total, total)
	return &Compiled{params: p, circuit: gc, compile: time.Since(start), templates: tmpl, turned: turned}, nil
}

// Params returns the circuit's dimensions.
func (c *Compiled) Params() Params { return c.params }

// Circuit returns the compiled circuit as the Groth16 engine takes it (for
// Setup and Solve).
func (c *Compiled) Circuit() *groth16.Circuit { return c.circuit }

// CompileTime is how long compiling took.
func (c *Compiled) CompileTime() time.Duration { return c.compile }

// Stats are the sizes of a compiled partition circuit.
type Stats struct {
	Constraints int // the circuit's own constraints
	Inputs      int // public variables including the constant one (bellperson's num_inputs)
	Aux         int // private variables: gnark's secret and internal wires
	Domain      int // Groth16 evaluation domain: next power of two ≥ Constraints + Inputs
	// Density of the A and B queries over the aux variables, in [0, 1].
	ADensityAux, BDensityAux float64
	// Commitments is the number of gnark commitments (always 0 here).
	Commitments int
}

// Stats reports the circuit's sizes.
func (c *Compiled) Stats() Stats {
	a, _, b := c.circuit.Densities()
	s := Stats{
		Constraints: c.circuit.NumConstraints(),
		Inputs:      c.circuit.NumInputs(),
		Aux:         c.circuit.NumAux(),
		Domain:      c.circuit.DomainSize(),
	}
	if s.Aux > 0 {
		s.ADensityAux = float64(a.Count()) / float64(s.Aux)
		s.BDensityAux = float64(b.Count()) / float64(s.Aux)
	}
	s.Commitments = commitments(c.circuit)
	return s
}

// commitments counts the gnark commitments of the wrapped R1CS.
func commitments(gc *groth16.Circuit) int {
	if ci, ok := gc.R1CS().CommitmentInfo.(constraint.Groth16Commitments); ok {
		return len(ci)
	}
	return 0
}
