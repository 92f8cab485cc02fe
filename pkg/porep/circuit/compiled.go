package circuit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/porep/stacked"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
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

// Compiled is the partition circuit of one shape, rust-fil-proofs'
// StackedCircuit (pkg/porep/stacked) recorded once as a Template, with its
// counts and densities. It is immutable and safe for concurrent use;
// ForShape shares one per circuit geometry per process.
type Compiled struct {
	shape    porep.Shape
	tmpl     *Template
	circuit  *groth16.Circuit
	sections []r1cs.Section // the recording's namespaces, to name a failing constraint
	compile  time.Duration
	hash     *hashCell // shared by the shapes of one geometry
}

// hashCell holds a circuit's bellpepper hash once computed.
type hashCell struct {
	mu  sync.Mutex
	hex string
}

// Option configures ForShape, Compile and Synthesize.
type Option func(*options)

type options struct {
	progress groth16.Progress
	// buffers is where Synthesize takes the instance's vectors from.
	buffers *groth16.BufferPool
	// cpuTime receives the CPU time of Synthesize's own threads.
	cpuTime *time.Duration
}

// WithProgress reports long stages (recording, hashing, synthesis) to p.
func WithProgress(p groth16.Progress) Option { return func(o *options) { o.progress = p } }

// WithBuffers makes Synthesize write into a set of buffers taken from pool
// (this circuit's NewBufferPool; it waits for one when the pool is at its
// limit) instead of allocating ~16 GiB per 32 GiB partition. The returned
// instance owns the set: the caller gives it back with
// Synthesized.Release once the proof no longer reads the witness
// (groth16.WitnessHolder; after the task's Release at the latest). A
// failed synthesis gives it back itself.
func WithBuffers(pool *groth16.BufferPool) Option { return func(o *options) { o.buffers = pool } }

// WithCPUTime makes Synthesize store in d the CPU time (user + system) its
// own threads spent on the partition, summed over the goroutines that did
// it (each locked to its OS thread while it works). Unlike the process's
// CPU time it stays exact while other partitions are synthesized in the
// same process. d is set to 0 where a thread's CPU time cannot be read
// (only Linux can).
func WithCPUTime(d *time.Duration) Option { return func(o *options) { o.cpuTime = d } }

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

// geometry is what a shape's circuit depends on (its name and porep id do
// not change a constraint): the cache key.
type geometry struct {
	nodes                   uint64
	layers, challenges      int
	base, exp, labelParents int
	tree                    porep.TreeShape
}

func geometryOf(s *porep.Shape) geometry {
	return geometry{s.Nodes, s.Layers, s.ChallengesPerPartition, s.BaseDegree, s.ExpDegree, s.LabelParents, s.Tree}
}

// cache holds one compiled circuit per geometry for the whole process. A
// failed compilation is cached too: it is a property of the shape.
var cache = struct {
	mu sync.Mutex
	m  map[geometry]*cacheEntry
}{m: map[geometry]*cacheEntry{}}

type cacheEntry struct {
	done chan struct{}
	c    *Compiled
	err  error
}

// ForShape returns the compiled circuit of shape s, compiling it on first
// use. Concurrent callers for the same geometry wait for one compilation.
func ForShape(s *porep.Shape, opts ...Option) (*Compiled, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil shape", ErrInvalidInput)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	key := geometryOf(s)
	cache.mu.Lock()
	e, ok := cache.m[key]
	if !ok {
		e = &cacheEntry{done: make(chan struct{})}
		cache.m[key] = e
	}
	cache.mu.Unlock()
	if ok {
		<-e.done
		if e.err != nil {
			return nil, e.err
		}
		return e.c.withShape(s), nil
	}
	e.c, e.err = Compile(s, opts...)
	close(e.done)
	return e.c, e.err
}

// withShape is c for another shape of the same geometry (shares everything
// but the name).
func (c *Compiled) withShape(s *porep.Shape) *Compiled {
	if c.shape.Name == s.Name {
		return c
	}
	return &Compiled{shape: *s, tmpl: c.tmpl, circuit: c.circuit, sections: c.sections, compile: c.compile, hash: c.hash}
}

// Compile records the partition circuit of s without the process-wide
// cache (ForShape is what a worker wants): the head and the first
// challenge of a blank StackedCircuit into a Template, then the
// densities. Progress reports the stage "circuit: record <shape>".
func Compile(s *porep.Shape, opts ...Option) (*Compiled, error) {
	o := collect(opts)
	stage := "circuit: record " + s.Name
	o.progress(stage, 0, 3)
	start := time.Now()
	blank, err := stacked.Blank(s)
	if err != nil {
		return nil, fmt.Errorf("circuit: %s: %w", s.Name, err)
	}
	tmpl, err := Record(&parts{c: blank}, r1cs.WithSections(4))
	if err != nil {
		return nil, fmt.Errorf("circuit: %s: %w", s.Name, err)
	}
	o.progress(stage, 1, 3)
	d := tmpl.Densities()
	o.progress(stage, 2, 3)
	gc, err := groth16.NewCircuit(tmpl.NumConstraints(), tmpl.NumInputs(), tmpl.NumAux(), groth16.Densities{
		ADensityAux: bitmap(d.AAux), BDensityInput: bitmap(d.BInput), BDensityAux: bitmap(d.BAux)})
	if err != nil {
		return nil, fmt.Errorf("circuit: %s: %w", s.Name, err)
	}
	if want := 1 + seal.NumPublicInputs(s); tmpl.NumInputs() != want {
		return nil, fmt.Errorf("circuit: %s: %d inputs, the public inputs are %d (with ONE)", s.Name, tmpl.NumInputs(), want)
	}
	o.progress(stage, 3, 3)
	return &Compiled{shape: *s, tmpl: tmpl, circuit: gc, sections: tmpl.Recording().Sections(), compile: time.Since(start), hash: new(hashCell)}, nil
}

func bitmap(b []bool) groth16.Bitmap {
	m := groth16.NewBitmap(len(b))
	for i, v := range b {
		if v {
			m.Set(i)
		}
	}
	return m
}

// parts is a StackedCircuit as Template's Parts: the head, then challenge i
// on the head's variables.
type parts struct {
	c    *stacked.Circuit
	head *stacked.Head
}

func (p *parts) Challenges() int { return len(p.c.Challenges) }

func (p *parts) Head(cs r1cs.CS) error {
	cs.Push(r1cs.N(stacked.Namespace))
	defer cs.Pop()
	h, err := p.c.Head(cs)
	p.head = h
	return err
}

func (p *parts) Challenge(cs r1cs.CS, i int) error {
	cs.Push(r1cs.N(stacked.Namespace))
	defer cs.Pop()
	return p.c.Challenge(cs, p.head, i)
}

// Shape is the shape the circuit was compiled for.
func (c *Compiled) Shape() *porep.Shape { s := c.shape; return &s }

// Template is the recorded circuit.
func (c *Compiled) Template() *Template { return c.tmpl }

// Circuit returns the circuit as the Groth16 engine takes it (counts and
// densities: buffer pools, instances).
func (c *Compiled) Circuit() *groth16.Circuit { return c.circuit }

// CompileTime is how long recording took.
func (c *Compiled) CompileTime() time.Duration { return c.compile }

// NewBufferPool returns a pool of this circuit's partition buffers holding
// at most limit sets (see WithBuffers).
func (c *Compiled) NewBufferPool(limit int) *groth16.BufferPool {
	return groth16.NewBufferPool(c.circuit, limit)
}

// Stats are the sizes of a partition circuit.
type Stats struct {
	Constraints int // the circuit's own constraints (the Groth16 input rows not included)
	Inputs      int // public variables including the constant one (bellperson's num_inputs)
	Aux         int // private variables
	Domain      int // Groth16 evaluation domain: next power of two ≥ Constraints + Inputs
	// ADensity is the aux variables in some A combination; BDensityInput
	// and BDensityAux the inputs and aux variables in some B combination.
	ADensity, BDensityInput, BDensityAux int
}

// Stats reports the circuit's sizes.
func (c *Compiled) Stats() Stats {
	a, bi, b := c.circuit.Densities()
	return Stats{
		Constraints: c.circuit.NumConstraints(), Inputs: c.circuit.NumInputs(), Aux: c.circuit.NumAux(),
		Domain: c.circuit.DomainSize(), ADensity: a.Count(), BDensityInput: bi.Count(), BDensityAux: b.Count(),
	}
}

// Hash is the circuit's bellpepper TestConstraintSystem hash (hex), the
// identity of the R1CS Groth16 parameters are made for: equal to
// bellperson's for the official shapes. It is computed on first use by
// replaying every constraint (a 32 GiB partition: ~30 GB through blake2s,
// a minute or two) and kept; a cancelled computation is not.
func (c *Compiled) Hash(ctx context.Context, progress groth16.Progress) (string, error) {
	c.hash.mu.Lock()
	defer c.hash.mu.Unlock()
	if c.hash.hex != "" {
		return c.hash.hex, nil
	}
	stage := "circuit: hash " + c.shape.Name
	h, err := c.tmpl.Hash(ctx, func(done, total int) {
		if progress != nil {
			progress(stage, int64(done), int64(total))
		}
	})
	if err != nil {
		return "", err
	}
	c.hash.hex = fmt.Sprintf("%x", h)
	return c.hash.hex, nil
}
