package circuit

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"

	"github.com/c2cluster/c2cluster/pkg/cputime"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
)

// withWholeSolve makes Synthesize run gnark's solver on the whole partition
// system instead of per template use: the tests' oracle.
func withWholeSolve() Option { return func(o *options) { o.wholeSolve = true } }

// Synthesize builds the witness of partition k of a C1 output and solves the
// circuit with it, returning the synthesized instance the Groth16 backends
// prove. out must be of this circuit's shape.
//
// It does not run gnark's solver on the whole partition system (whose
// parallel solver scales badly on it: a shared counter per solved wire and a
// barrier per level). The system is the replay of two templates (template.go),
// so it solves the head template once, then the challenge template once per
// challenge, the challenges concurrently on GOMAXPROCS goroutines, each solve
// single-threaded (solveGate), with its own solver (templateSolver: gnark's
// solving rules, reading and writing the wires and constraint rows the use
// was renamed to directly in the partition's vectors), then swaps A and B
// of the constraints balanceB turned. The result is what gnark's solver
// returns on the whole system, byte for byte (TestSynthesizePerTemplate).
//
// Errors: ErrInvalidInput when the C1 output does not fit the shape,
// ErrUnsatisfied when it fits but some check of the vanilla proof fails
// (both permanent), ctx.Err() when ctx ends first (checked between template
// solves).
func (c *Compiled) Synthesize(ctx context.Context, out *c1.Output, k int, opts ...Option) (*groth16.Synthesized, error) {
	o := collect(opts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// With WithCPUTime on the per-template solve: the CPU time of this
	// goroutine's part (witness, head) plus that of the challenge
	// goroutines (solveTemplates adds theirs); nil when not measured.
	var cpu *atomic.Int64
	if o.cpuTime != nil {
		*o.cpuTime = 0
		if c.templates != nil && !o.wholeSolve {
			cpu = new(atomic.Int64)
			timer := cputime.Start()
			defer func() {
				timer.Stop(cpu)
				*o.cpuTime = time.Duration(cpu.Load())
			}()
		}
	}
	o.progress("circuit: witness", 0, 1)
	wit, err := c.Witness(out, k)
	if err != nil {
		return nil, err
	}
	o.progress("circuit: witness", 1, 1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.progress("circuit: solve", 0, 1)
	var s *groth16.Synthesized
	if c.templates == nil || o.wholeSolve {
		s, err = c.circuit.Solve(wit)
		if err != nil {
			err = fmt.Errorf("%w: shape %s partition %d: %v", ErrUnsatisfied, c.params.Name, k, err)
		}
	} else {
		s, err = c.solveTemplates(ctx, wit, k, o.buffers, cpu)
	}
	if err != nil {
		return nil, err
	}
	o.progress("circuit: solve", 1, 1)
	if err := ctx.Err(); err != nil {
		s.Release()
		return nil, err
	}
	return s, nil
}

// solveTemplates solves the partition system per template use (see
// Synthesize) on a full partition witness, into a set of pool's buffers
// when pool is not nil. With cpu, each challenge goroutine adds its own
// thread's CPU time to it.
//
// Every element of the vectors it hands on is written here, so a reused set
// needs no clearing: the wires are the constant one, the witness, and the
// internal wires of the head and of every challenge (contiguous per use,
// together all of them: assemble checks the count); A, B, C are the
// constraints of the head and every challenge (contiguous per use, together
// all of them: replay checks each use's count), and the input rows are
// written by groth16's Synthesized. Capacity beyond that is left as it is
// (backends never read past len: groth16.Synthesized).
// TestSynthesizeIntoDirtyBuffers checks it.
func (c *Compiled) solveTemplates(ctx context.Context, wit witness.Witness, k int, pool *groth16.BufferPool, cpu *atomic.Int64) (_ *groth16.Synthesized, err error) {
	t := c.templates
	gc := c.circuit
	r := gc.R1CS()
	vec, ok := wit.Vector().(fr.Vector)
	if !ok || len(vec) != len(r.Public)-1+len(r.Secret) {
		return nil, fmt.Errorf("circuit: solve: witness is %T of %d values, want %d BLS12-381 values", wit.Vector(), len(vec), len(r.Public)-1+len(r.Secret))
	}
	// The partition's vectors, allocated once (or taken from the pool);
	// each template use writes its own disjoint ranges. A, B, C have room
	// for the input rows (groth16's Synthesized appends them in place).
	var buf *groth16.Buffers
	var pv partitionVectors
	if pool != nil {
		if pool.Circuit() != gc {
			return nil, fmt.Errorf("circuit: solve: buffer pool of another circuit")
		}
		if buf, err = pool.Get(ctx); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				buf.Release()
			}
		}()
		pv = partitionVectors{wires: buf.Wires, a: buf.A, b: buf.B, c: buf.C,
			wireCodes: buf.WireCodes, aCodes: buf.ACodes, bCodes: buf.BCodes, cCodes: buf.CCodes}
	} else { // no codes: nothing would read them
		nc, dom := gc.NumConstraints(), gc.DomainSize()
		pv = partitionVectors{wires: make([]fr.Element, gc.NumInputs()+gc.NumAux()),
			a: make([]fr.Element, nc, dom), b: make([]fr.Element, nc, dom), c: make([]fr.Element, nc, dom)}
	}
	wires := pv.wires
	wires[0].SetOne()
	copy(wires[1:], vec)
	if pv.wireCodes != nil {
		groth16.EncodeCodes(pv.wireCodes, wires[:1+len(vec)])
	}

	// solve solves challenge j's use (the head's for j < 0), whose input
	// wires are all known, straight into the partition's vectors
	// (templateSolver), then swaps A and B of the rows balanceB turned.
	solve := func(j int, sc *solveScratch) error {
		ts, u, what := t.head, &t.headUse, "head"
		if j >= 0 {
			ts, u = t.chal, &t.chalUses[j]
		}
		if err := ts.solveUse(u, &pv, sc); err != nil {
			if j >= 0 {
				what = fmt.Sprintf("challenge %d", j)
			}
			return fmt.Errorf("%w: shape %s partition %d %s: %v", ErrUnsatisfied, c.params.Name, k, what, err)
		}
		for i := u.cons0; i < u.cons0+ts.sys.NbConstraints; i++ {
			if c.turned.has(i) {
				pv.a[i], pv.b[i] = pv.b[i], pv.a[i]
				if pv.aCodes != nil {
					pv.aCodes[i], pv.bCodes[i] = pv.bCodes[i], pv.aCodes[i]
				}
			}
		}
		return nil
	}

	// Every solve holds one of the process's cores (solveGate: the oldest
	// synthesis first). The head first: the challenges read its replica bits.
	seq := synthesisSeq.Add(1)
	if err := solves.acquire(ctx, seq); err != nil {
		return nil, err
	}
	err = solve(-1, new(solveScratch))
	solves.release()
	if err != nil {
		return nil, err
	}
	n := len(t.chalUses)
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cpu != nil {
				defer cputime.Start().Stop(cpu)
			}
			var sc solveScratch
			for !failed.Load() {
				if err := solves.acquire(ctx, seq); err != nil {
					failed.Store(true)
					if j := int(next.Add(1) - 1); j < n {
						errs[j] = err
					}
					return
				}
				j := int(next.Add(1) - 1)
				if j >= n {
					solves.release()
					return
				}
				err := ctx.Err()
				if err == nil {
					err = solve(j, &sc)
				}
				solves.release()
				if err != nil {
					errs[j] = err
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := cmp.Or(errs...); err != nil { // the lowest challenge that failed among those solved
		return nil, err
	}
	if buf != nil {
		return gc.SynthesizedBuffers(buf)
	}
	return gc.Synthesized(pv.wires, pv.a, pv.b, pv.c)
}
