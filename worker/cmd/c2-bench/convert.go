package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/worker/backend"
)

// convertH converts a monomial key to coset-Lagrange form: the library's
// groth16.ConvertHCosetLagrange. The end-to-end tests put another
// conversion here: the CPU's group DFT of test-micro's 2^18 points would
// take most of an hour.
var convertH = groth16.ConvertHCosetLagrange

// errSameProof: the converted key proved other bytes than the monomial one.
var errSameProof = errors.New("the converted key's proof differs from the monomial key's")

// convertStagePrefix starts the conversion's progress stages ("convert h:
// scale", "convert h: dft", "convert h: c matrix", "convert h: fold").
const convertStagePrefix = "convert h: "

// timedConvert runs convertH on pk with dft and returns the converted key
// and its times: the whole call, each call of dft, and each progress stage
// from its first report to its end (done == total); progress, when not
// nil, receives every report too.
func timedConvert(ctx context.Context, pk *groth16.ProvingKey, sys groth16.R1CS, dft groth16.G1DFT, progress groth16.Progress) (*groth16.ProvingKey, *Conversion, error) {
	c := &Conversion{Stages: map[string]float64{}, Progress: map[string]StageProgress{}}
	var mu sync.Mutex
	began := map[string]time.Time{}
	var order []string
	observe := func(stage string, done, total int64) {
		now := time.Now()
		mu.Lock()
		name := strings.TrimPrefix(stage, convertStagePrefix)
		if _, ok := began[name]; !ok {
			began[name] = now
			order = append(order, name)
		}
		took := now.Sub(began[name]).Seconds()
		c.Progress[name] = StageProgress{Done: done, Total: total, Seconds: took}
		if done == total {
			c.Stages[name] = took
		}
		mu.Unlock()
		if progress != nil {
			progress(stage, done, total)
		}
	}
	timed := func(ctx context.Context, points []curve.G1Affine, inverse bool, scale *groth16.DFTScale) error {
		start := time.Now()
		err := dft(ctx, points, inverse, scale)
		mu.Lock()
		c.DFTSeconds = append(c.DFTSeconds, time.Since(start).Seconds())
		c.DFTPoints = len(points)
		mu.Unlock()
		return err
	}
	start := time.Now()
	conv, err := convertH(ctx, pk, sys, timed, observe)
	c.Seconds = time.Since(start).Seconds()
	mu.Lock()
	defer mu.Unlock()
	c.StageOrder = order
	if err != nil {
		return nil, c, err
	}
	if conv == nil || conv.HForm != groth16.HCosetLagrange {
		return nil, c, errors.New("the conversion returned no key in coset-Lagrange form")
	}
	return conv, c, nil
}

// convert turns the generated monomial key pk into coset-Lagrange form
// with the group DFT the backend selection gives (cuda.SelectDFT: the GPU
// when there is one), then, with -same-proof, proves partition 0 with
// both keys (sameProof). It drops pk's H and L once they are no longer
// needed (the converted key shares pk's A, B and verifying key) and
// returns the converted key.
func (b *bench) convert(ctx context.Context, compiled *circuit.Compiled, pk *groth16.ProvingKey, dev int) (*groth16.ProvingKey, error) {
	o := b.o
	dft, why, err := cuda.SelectDFT(o.backend, cuda.Config{LibraryPath: o.cudaLibrary, Device: dev})
	if err != nil {
		return nil, err
	}
	b.mem.Reset()
	b.printf("params: converting the monomial key to coset-Lagrange form (%s)", why)
	conv, c, err := timedConvert(ctx, pk, compiled.Template(), dft, b.progress("params"))
	c.DFT = why
	b.rep.Params.Convert = c
	b.rep.Params.ConvertSeconds = c.Seconds
	c.Peaks = b.mem.Peaks()
	if err != nil {
		return nil, fmt.Errorf("params: convert h: %w", err)
	}
	b.printf("params: converted in %.1fs (%s)", c.Seconds, c.stageLine())
	c.FreedBytes = int64(len(pk.H)+len(pk.L)) * int64(unsafe.Sizeof(curve.G1Affine{}))
	if o.sameProof {
		if err := b.sameProof(ctx, compiled, pk, conv, dev); err != nil {
			return nil, err
		}
	}
	// The monomial H and L are garbage now; A, B and the verifying key
	// live on in the converted key.
	pk.H, pk.L = nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	c.HeapAfter = heapLive()
	b.printf("params: monomial H and L dropped (%s GiB); live heap %s GiB", gib(c.FreedBytes), gib(c.HeapAfter))
	return conv, nil
}

// sameProof proves partition 0 of the input with the monomial key and
// with the converted one, the same r and s, on the backend the worker's
// selection gives (its first device), and requires the same bytes; the
// converted key's proof must verify. Each key is loaded alone (at 32 GiB
// the two do not fit one GPU together) and closed after its proof; the
// monomial key's H and L are dropped between the two.
func (b *bench) sameProof(ctx context.Context, compiled *circuit.Compiled, pk, conv *groth16.ProvingKey, dev int) error {
	o := b.o
	sp := &SameProof{Partition: 0}
	b.rep.Params.Convert.SameProof = sp
	b.mem.Reset()
	start := time.Now()
	defer func() {
		sp.Seconds = time.Since(start).Seconds()
		sp.Peaks = b.mem.Peaks()
	}()
	opts := backend.Options{CPUThreads: o.cpuThreads, CUDALibrary: o.cudaLibrary, Residency: o.residency}
	var want []int
	if len(o.devices) > 0 {
		want = []int{dev}
	}
	sel, err := backend.Select(o.backend, opts, want)
	if err != nil {
		return fmt.Errorf("params: same proof: %w", err)
	}
	opts.Device = sel.Devices[0]
	be, err := sel.Factory.New(opts)
	if err != nil {
		return fmt.Errorf("params: same proof: %w", err)
	}
	sp.Backend = fmt.Sprintf("%s device %d (%s)", sel.Factory.Name, opts.Device, sel.Why)
	rnd, err := groth16.NewRandomness()
	if err != nil {
		return err
	}
	b.printf("params: same proof: partition 0 with the monomial and the converted key, the same r and s, on %s", sp.Backend)
	prove := func(which string, key *groth16.ProvingKey, load, took *float64) (*groth16.Proof, error) {
		t := time.Now()
		k, err := be.Load(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("params: same proof: load the %s key: %w", which, err)
		}
		defer k.Close()
		*load = time.Since(t).Seconds()
		w, err := compiled.Synthesize(ctx, b.out, sp.Partition)
		if err != nil {
			return nil, fmt.Errorf("params: same proof: synthesize partition %d: %w", sp.Partition, err)
		}
		defer w.Release()
		t = time.Now()
		proof, _, err := groth16.Prove(ctx, k, w, rnd)
		*took = time.Since(t).Seconds()
		if err != nil {
			return nil, fmt.Errorf("params: same proof: prove partition %d with the %s key: %w", sp.Partition, which, err)
		}
		b.printf("params: same proof: %s key loaded (%s) in %.1fs, proved in %.2fs", which, k.Residency(), *load, *took)
		return proof, nil
	}
	mono, err := prove("monomial", pk, &sp.MonomialLoad, &sp.MonomialProve)
	if err != nil {
		return err
	}
	// The monomial H and L (a quarter of the key) go before the second load.
	pk.H, pk.L = nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	got, err := prove("converted", conv, &sp.ConvertedLoad, &sp.ConvertedProve)
	if err != nil {
		return err
	}
	mb, err := mono.MarshalBinary()
	if err != nil {
		return err
	}
	gb, err := got.MarshalBinary()
	if err != nil {
		return err
	}
	sp.Monomial, sp.Converted = hex.EncodeToString(mb), hex.EncodeToString(gb)
	sp.Identical = string(mb) == string(gb)
	inputs, err := circuit.PublicInputs(b.out, sp.Partition)
	if err != nil {
		return fmt.Errorf("params: same proof: public inputs: %w", err)
	}
	verr := groth16.Verify(&conv.VK, got, inputs)
	sp.Verified = verr == nil
	switch {
	case !sp.Identical:
		b.printf("params: same proof: DIFFERENT bytes: monomial %s, converted %s", sp.Monomial, sp.Converted)
		return fmt.Errorf("params: partition %d: %w (monomial %s, converted %s)", sp.Partition, errSameProof, sp.Monomial, sp.Converted)
	case verr != nil:
		return fmt.Errorf("params: same proof: the converted key's proof of partition %d does not verify: %w", sp.Partition, verr)
	}
	b.printf("params: same proof: identical bytes, verified (%s)", sp.Converted)
	return nil
}

// stageLine is the conversion's stage times in one line.
func (c *Conversion) stageLine() string {
	var parts []string
	for _, s := range c.StageOrder {
		if v, ok := c.Stages[s]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1fs", s, v))
		} else {
			p := c.Progress[s]
			parts = append(parts, fmt.Sprintf("%s unfinished (%d/%d in %.1fs)", s, p.Done, p.Total, p.Seconds))
		}
	}
	if len(c.DFTSeconds) > 0 {
		var d []string
		for _, v := range c.DFTSeconds {
			d = append(d, fmt.Sprintf("%.1fs", v))
		}
		parts = append(parts, fmt.Sprintf("DFTs of %d points %s", c.DFTPoints, strings.Join(d, " + ")))
	}
	return strings.Join(parts, ", ")
}
