// Command c2-bench proves the partitions of one PoRep C2 job end to end,
// the way a worker does, and measures where the time and the memory go:
//
//	c2-bench -shape 32GiB -backend cuda -cuda-library cuda/build/libc2groth16.so -sweep -json out.json
//
// The input is a sparse C1 made in memory (sealer.WriteSparseC1: a
// BENCHMARK INPUT, not a sealed sector) or a real one (-c1). The circuit
// is compiled with circuit.ForShape; the Groth16 parameters are read from
// -params-dir when they are there and fit the circuit, else generated in
// memory with fresh random toxic waste (the fixed-base multiplications on
// the GPU when the backend is cuda) and written only with -write-params.
// With -h-form converted they are generated in bellperson's monomial form
// and converted to coset-Lagrange form by groth16.ConvertHCosetLagrange
// (the group DFTs on the GPU when there is one), timed stage by stage; the
// first partition is then proved with both keys, the same r and s, and
// must give the same bytes.
// The partitions are proved by the worker's own code: worker/node's Prover
// (backend selection, parameters resident per device, the device
// interlock, slots = devices × gpu_workers_per_device) and its slots'
// ProvePartition (synthesis, interlocked proof, verification against the
// natively computed public inputs); only the queue is left out. Every
// proof is verified; a failed one makes the exit status 1.
//
// -sweep proves the job once per interlock mode × workers per device
// (none / exclusive / compute / split × 1, 2, 3 by default) with the same
// parameters, kept loaded. Progress goes to stderr, a table to stdout, and
// everything measured to -json. docs/operations.md ("Benchmarking C2 on a
// GPU host") says how to run it on a GPU machine.
package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/c2cluster/c2cluster/pkg/buildinfo"
	"github.com/c2cluster/c2cluster/pkg/cputime"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
	"github.com/c2cluster/c2cluster/pkg/memlimit"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	"github.com/c2cluster/c2cluster/worker/backend"
	"github.com/c2cluster/c2cluster/worker/interlock"
	"github.com/c2cluster/c2cluster/worker/node"
)

// errVerification: some proof did not verify (exit status 1).
var errVerification = errors.New("some partition proofs failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "c2-bench: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "c2-bench: %v\n", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// options are the parsed flags.
type options struct {
	shape        string
	shapeSet     bool
	partitions   int
	c1Path       string
	seed         uint64
	backend      string
	cudaLibrary  string
	devices      []int
	residency    string
	cpuThreads   int
	interlock    string
	workers      int
	vramBudget   int64
	sweep        bool
	warmup       bool
	sweepModes   []interlock.Mode
	sweepWorkers []int
	paramsDir    string
	writeParams  bool
	trusted      bool
	setupSeed    string
	hForm        groth16.HForm
	convert      bool // -h-form converted: generate monomial, convert (hForm is HMonomial)
	sameProof    bool
	jsonPath     string
	memLimit     memlimit.Setting
	quiet        bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("c2-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	buildinfo.Register(fs)
	o := &options{}
	var devices, modes, workers string
	fs.StringVar(&o.shape, "shape", "32GiB", "proof shape ("+strings.Join(porep.ShapeNames(), ", ")+")")
	fs.IntVar(&o.partitions, "partitions", 0, "partitions in the job (0: the shape's); more than the C1 has cycles through them")
	fs.StringVar(&o.c1Path, "c1", "", "a real C1 output (JSON) to prove instead of the sparse BENCHMARK INPUT; its shape wins")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the sparse BENCHMARK INPUT C1")
	fs.StringVar(&o.backend, "backend", backend.NameAuto, "prover backend: auto, cpu or cuda (worker/backend; setup's fixed-base multiplications follow it)")
	fs.StringVar(&o.cudaLibrary, "cuda-library", os.Getenv("C2_CUDA_LIBRARY"), "path of libc2groth16.so ($C2_CUDA_LIBRARY; default $C2G_CUDA_LIB, then the loader's path)")
	fs.StringVar(&devices, "devices", "", "device indexes, e.g. 0,1 (default: every device the backend finds)")
	fs.StringVar(&o.residency, "residency", "", "parameters on a GPU: auto, device or pinned (default auto)")
	fs.IntVar(&o.cpuThreads, "cpu-threads", 0, "CPU backend goroutines per proof (0: all cores)")
	fs.StringVar(&o.interlock, "interlock", string(interlock.ModeDefault), "interlock mode: none, exclusive, compute or split")
	fs.IntVar(&o.workers, "gpu-workers", 0, "slots per device, gpu_workers_per_device (0: the worker's default, 3 on a GPU, 1 on the CPU)")
	fs.Int64Var(&o.vramBudget, "vram-budget", 0, "per-device VRAM budget of proofs in flight, bytes (0: none)")
	fs.BoolVar(&o.sweep, "sweep", false, "prove the job once per interlock mode × workers per device (-sweep-modes × -sweep-workers)")
	fs.BoolVar(&o.warmup, "warmup", false, "before each run, prove one partition per slot, verified but not measured (the slots' buffer sets allocated, page-locked and faulted in), so short runs measure the steady state")
	fs.StringVar(&modes, "sweep-modes", "none,exclusive,compute,split", "interlock modes of -sweep")
	fs.StringVar(&workers, "sweep-workers", "1,2,3", "workers per device of -sweep")
	fs.StringVar(&o.paramsDir, "params-dir", "", "read the parameters from here when present and made for this circuit: Filecoin's files by their official names for an official shape, <shape>.params for a test shape")
	fs.BoolVar(&o.writeParams, "write-params", false, "write parameters generated in memory to -params-dir (.params, .vk, .circuit fingerprint)")
	fs.BoolVar(&o.trusted, "trusted-params", false, "skip the subgroup check of parameters read from -params-dir (on the device when -backend selects one: ~30 s at 32 GiB; ~21 min on 16 CPU cores)")
	fs.StringVar(&o.setupSeed, "setup-seed", "", "make the generated toxic waste deterministic (tests only: whoever knows the seed can forge proofs)")
	var hForm string
	fs.StringVar(&hForm, "h-form", "auto", "H query of parameters generated in memory: coset-lagrange (the prover's H path in four NTTs instead of six; same proofs and verifying key), monomial (bellperson's layout, the only one -write-params can write), converted (generated monomial, then converted to coset-lagrange by groth16.ConvertHCosetLagrange with the group DFTs on the GPU when the backend finds one, timed), or auto (coset-lagrange, monomial with -write-params); parameters read from -params-dir are monomial")
	fs.BoolVar(&o.sameProof, "same-proof", true, "with -h-form converted: prove partition 0 with the monomial and the converted key, the same r and s, on the selected backend, and stop unless the bytes are identical")
	fs.StringVar(&o.jsonPath, "json", "", "write everything measured to this JSON file")
	var memLimit string
	fs.StringVar(&memLimit, "mem-limit", "auto", "Go soft memory limit: auto (90% of the host's or cgroup's memory unless $GOMEMLIMIT is set), off, or bytes (e.g. 120GiB)")
	fs.BoolVar(&o.quiet, "quiet", false, "only warnings from the worker's log")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: c2-bench [flags]

Prove the partitions of one PoRep C2 job the way a worker does (backend
selection, parameters resident per device, the device interlock, slots per
device, every proof verified) and measure it: per partition synthesis wall
and CPU time, interlock wait, upload and compute, verification; per run
wall, throughput, latency, host RSS and VRAM peaks. Progress on stderr, a
table on stdout, everything with -json. Exit 1 if any proof fails to verify.

Input, unless -c1 names a real C1 output:
%s

Parameters: read from -params-dir when present and made for this circuit,
otherwise generated in memory with fresh random toxic waste (GOOD FOR THIS
BENCHMARK ONLY), written to -params-dir only with -write-params;
-h-form converted generates them monomial, converts them to coset-Lagrange
form (timed) and proves partition 0 with both keys (-same-proof).

Flags:
`, sealer.SparseC1Help)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	sameProofSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "shape":
			o.shapeSet = true
		case "same-proof":
			sameProofSet = true
		}
	})
	if _, err := porep.ShapeByName(o.shape); err != nil && o.c1Path == "" {
		return nil, usagef("-shape: %v", err)
	}
	if o.partitions < 0 {
		return nil, usagef("-partitions %d is negative", o.partitions)
	}
	if _, err := interlock.ParseMode(o.interlock); err != nil {
		return nil, usagef("-interlock: %v", err)
	}
	if o.workers < 0 || o.cpuThreads < 0 || o.vramBudget < 0 {
		return nil, usagef("-gpu-workers, -cpu-threads and -vram-budget must not be negative")
	}
	var err error
	if o.devices, err = parseInts(devices); err != nil {
		return nil, usagef("-devices: %v", err)
	}
	for _, m := range splitList(modes) {
		mode, err := interlock.ParseMode(m)
		if err != nil {
			return nil, usagef("-sweep-modes: %v", err)
		}
		o.sweepModes = append(o.sweepModes, mode)
	}
	if o.sweepWorkers, err = parseInts(workers); err != nil {
		return nil, usagef("-sweep-workers: %v", err)
	}
	for _, w := range o.sweepWorkers {
		if w < 1 {
			return nil, usagef("-sweep-workers: %d is not a positive count", w)
		}
	}
	if o.sweep && (len(o.sweepModes) == 0 || len(o.sweepWorkers) == 0) {
		return nil, usagef("-sweep needs at least one mode and one worker count")
	}
	if o.writeParams && o.paramsDir == "" {
		return nil, usagef("-write-params needs -params-dir")
	}
	if s, err := porep.ShapeByName(o.shape); err == nil && !s.Test && o.writeParams {
		return nil, usagef("-write-params: %s is an official shape, proved with Filecoin's parameter files only; parameters generated here serve this benchmark alone", o.shape)
	}
	switch {
	case hForm == "auto" && o.writeParams:
		o.hForm = groth16.HMonomial
	case hForm == "auto":
		o.hForm = groth16.HCosetLagrange
	case hForm == "converted":
		if o.writeParams {
			return nil, usagef("-h-form converted: -write-params writes bellperson's layout, which holds only a monomial H query (c2-params -convert-h converts a written .params file)")
		}
		if o.paramsDir != "" {
			return nil, usagef("-h-form converted converts parameters generated in memory; -params-dir reads them from files (c2-params -convert-h converts a .params file into the H file a worker proves with)")
		}
		o.hForm, o.convert = groth16.HMonomial, true
	default:
		if o.hForm, err = groth16.ParseHForm(hForm); err != nil {
			return nil, usagef("-h-form: %v", err)
		}
		if o.writeParams && o.hForm != groth16.HMonomial {
			return nil, usagef("-h-form %s: -write-params writes bellperson's layout, which holds only a monomial H query", hForm)
		}
	}
	if sameProofSet && !o.convert {
		return nil, usagef("-same-proof checks the conversion of -h-form converted; -h-form is %s", hForm)
	}
	if o.memLimit, err = memlimit.Parse(memLimit); err != nil {
		return nil, usagef("-mem-limit: %v", err)
	}
	switch o.backend {
	case backend.NameAuto, backend.NameCPU, backend.NameCUDA:
	default:
		return nil, usagef("-backend %q is not auto, cpu or cuda", o.backend)
	}
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// bench is one invocation's state.
type bench struct {
	o       *options
	stderr  io.Writer
	log     *slog.Logger
	mem     *sampler
	rep     *Report
	shape   *porep.Shape
	out     *c1.Output
	started time.Time

	progMu sync.Mutex
	// cur receives the interlock events of the run in progress.
	cur atomic.Pointer[runState]
}

func (b *bench) printf(format string, a ...any) {
	b.progMu.Lock()
	defer b.progMu.Unlock()
	fmt.Fprintf(b.stderr, "[%7.1fs] "+format+"\n", append([]any{time.Since(b.started).Seconds()}, a...)...)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if buildinfo.Requested(args) {
		fmt.Fprintln(stdout, buildinfo.Line("c2-bench"))
		return nil
	}
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	b := &bench{o: o, stderr: stderr, started: time.Now()}
	level := slog.LevelInfo
	if o.quiet {
		level = slog.LevelWarn
	}
	b.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	b.rep = &Report{Tool: "c2-bench", Started: b.started, Args: args, Verified: true}
	b.rep.Host = hostInfo()
	b.setMemoryLimit()
	b.mem = newSampler()
	defer b.mem.Close()

	if err := b.input(ctx); err != nil {
		return err
	}
	compiled, err := b.compile()
	if err != nil {
		return err
	}
	sp, err := b.params(ctx, compiled)
	if err != nil {
		return b.cut(stdout, "params", err)
	}
	p, err := b.prover(ctx, sp)
	if err != nil {
		return b.cut(stdout, "prover", err)
	}
	defer p.Close()

	configs := []struct {
		mode    interlock.Mode
		workers int
	}{{interlock.Mode(o.interlock), o.workers}}
	if o.sweep {
		configs = configs[:0]
		for _, m := range o.sweepModes {
			for _, w := range o.sweepWorkers {
				configs = append(configs, struct {
					mode    interlock.Mode
					workers int
				}{m, w})
			}
		}
	}
	// A run that cannot finish (the deadline of a lent GPU machine, a
	// signal) ends the sweep, but the runs before it are still reported.
	var cut error
	for i, c := range configs {
		label := fmt.Sprintf("run %d/%d", i+1, len(configs))
		if err := b.runConfig(ctx, p, sp, label, c.mode, c.workers); err != nil {
			cut = fmt.Errorf("%s (%s×%d): %w", label, c.mode, c.workers, err)
			b.rep.Interrupted = cut.Error() + "; the runs before it are complete"
			b.rep.Verified = false
			break
		}
	}
	if err := b.report(stdout); err != nil {
		return err
	}
	if cut != nil {
		return cut
	}
	if !b.rep.Verified {
		return fmt.Errorf("%w: %d of %d did not verify (see the table and -json)", errVerification, b.rep.Failures, b.rep.Failures+b.rep.Proofs)
	}
	return nil
}

// report prints the table and writes the JSON (-json).
func (b *bench) report(stdout io.Writer) error {
	b.rep.TotalWall = time.Since(b.started).Seconds()
	if err := b.mem.VRAMError(); err != nil {
		b.note("VRAM sampling failed at times: %v", err)
	}
	printTable(stdout, b.rep)
	if b.o.jsonPath != "" {
		if err := writeJSON(b.o.jsonPath, b.rep); err != nil {
			return err
		}
		b.printf("wrote %s", b.o.jsonPath)
	}
	return nil
}

// cut ends the command before any run: the stage that failed (a deadline,
// a signal, a conversion whose proof differs) and why go into the table
// and the JSON with what was measured until then; err is returned.
func (b *bench) cut(stdout io.Writer, stage string, err error) error {
	if !strings.HasPrefix(err.Error(), stage+":") {
		err = fmt.Errorf("%s: %w", stage, err)
	}
	b.rep.Interrupted = err.Error() + "; no run started"
	b.rep.Verified = false
	if rerr := b.report(stdout); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// runConfig proves the job once with the interlock mode and workers per
// device (after a warm-up with -warmup) and adds the run to the report.
func (b *bench) runConfig(ctx context.Context, p *node.Prover, sp *node.ShapeParams, label string, mode interlock.Mode, workers int) error {
	if err := p.SetInterlock(mode, workers, b.o.vramBudget); err != nil {
		return err
	}
	runtime.GC()
	debug.FreeOSMemory() // the last run's garbage must not count in this run's peaks
	warm := 0
	if b.o.warmup {
		w, err := b.runJob(ctx, p, sp, label+" warm-up", len(p.Slots()))
		if err != nil {
			return err
		}
		warm = w.Partitions
		b.count(w) // proofs all the same: counted and verified
	}
	r, err := b.runJob(ctx, p, sp, label, b.o.partitions)
	if err != nil {
		return err
	}
	r.WarmupPartitions = warm
	b.rep.Runs = append(b.rep.Runs, r)
	b.count(r)
	return nil
}

// count adds a run's proofs to the report's totals.
func (b *bench) count(r *Run) {
	b.rep.Proofs += r.Verified
	b.rep.Failures += r.Failed
	if r.Failed > 0 {
		b.rep.Verified = false
	}
}

func (b *bench) note(format string, a ...any) {
	b.rep.Notes = append(b.rep.Notes, fmt.Sprintf(format, a...))
}

func hostInfo() Host {
	h := Host{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), MemTotal: memlimit.HostMemory(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				h.Revision = s.Value
			}
		}
	}
	return h
}

// setMemoryLimit sets Go's soft memory limit (pkg/memlimit, as the worker's
// memory_limit): at 32 GiB the live heap is ~90 GB (parameters, circuit,
// witnesses), and the GC's default target of twice the live heap would not
// fit the host.
func (b *bench) setMemoryLimit() {
	limit, why := memlimit.Apply(b.o.memLimit)
	b.rep.Host.MemoryLimit = limit
	b.printf("Go soft memory limit: %s (%s)", memlimit.Format(limit), why)
}

// input makes (or reads) the C1 output and parses it as a worker does.
func (b *bench) input(ctx context.Context) error {
	o := b.o
	start := time.Now()
	var data []byte
	in := &b.rep.Input
	if o.c1Path != "" {
		var err error
		if data, err = os.ReadFile(o.c1Path); err != nil {
			return err
		}
		in.Kind, in.Path, in.Label = "file", o.c1Path, "C1 file "+o.c1Path
		b.printf("input: C1 output %s (%d bytes)", o.c1Path, len(data))
	} else {
		b.printf("input: making a sparse C1 for %s in memory (seed %d)", o.shape, o.seed)
		var buf bytes.Buffer
		res, err := sealer.WriteSparseC1(ctx, sealer.SparseC1Config{Shape: o.shape, Seed: o.seed, Progress: prefixWriter{b: b, prefix: "input"}}, &buf)
		if err != nil {
			return fmt.Errorf("sparse C1: %w", err)
		}
		if !res.BenchmarkInput {
			return errors.New("sparse C1: the sealer did not mark it as a benchmark input")
		}
		data = buf.Bytes()
		in.Kind, in.Seed = "sparse", o.seed
		in.Label = fmt.Sprintf("BENCHMARK INPUT (sparse C1, seed %d: not a sealed sector, its comm_r belongs to no replica)", o.seed)
	}
	out, err := c1.ParseBytes(data) // as the worker parses a job's blob
	if err != nil {
		return fmt.Errorf("C1: %w", err)
	}
	if out.Shape == nil {
		return errors.New("C1: no shape")
	}
	if o.c1Path != "" && o.shapeSet && out.Shape.Name != o.shape {
		return usagef("-c1 %s is of shape %s, -shape says %s", o.c1Path, out.Shape.Name, o.shape)
	}
	b.shape, b.out = out.Shape, out
	b.rep.Shape = out.Shape.Name
	in.Bytes, in.Seconds, in.CommR = int64(len(data)), time.Since(start).Seconds(), fmt.Sprintf("%x", out.CommR[:])
	in.Partition = out.Shape.Partitions
	if o.partitions == 0 {
		o.partitions = out.Shape.Partitions
	}
	if o.partitions > out.Shape.Partitions {
		b.note("the job has %d partitions, the C1 %d: partition i proves C1 partition i mod %d", o.partitions, out.Shape.Partitions, out.Shape.Partitions)
	}
	b.printf("input: %s, %d partitions, %d bytes, %.1fs", out.Shape.Name, out.Shape.Partitions, len(data), in.Seconds)
	return nil
}

// compile compiles the shape's partition circuit (once per process).
func (b *bench) compile() (*circuit.Compiled, error) {
	b.mem.Reset()
	start := time.Now()
	b.printf("compile: %s partition circuit", b.shape.Name)
	compiled, err := circuit.ForShape(b.shape, circuit.WithProgress(b.progress("compile")))
	if err != nil {
		return nil, err
	}
	c := &b.rep.Circuit
	c.CompileSeconds = time.Since(start).Seconds()
	c.CompiledIn = compiled.CompileTime().Seconds()
	c.Peaks = b.mem.Peaks()
	st := compiled.Stats()
	c.Constraints, c.Inputs, c.Aux, c.Domain = st.Constraints, st.Inputs, st.Aux, st.Domain
	if st.Aux > 0 {
		c.ADensity, c.BDensity = float64(st.ADensity)/float64(st.Aux), float64(st.BDensityAux)/float64(st.Aux)
	}
	runtime.GC()
	debug.FreeOSMemory()
	c.HeapAfter = heapLive()
	b.printf("compile: %d constraints, %d inputs, %d aux, domain 2^%d in %.1fs (peak heap %s GiB, kept %s GiB)",
		st.Constraints, st.Inputs, st.Aux, bits.Len(uint(st.Domain-1)), c.CompileSeconds, gib(c.Peaks.Heap), gib(c.HeapAfter))
	return compiled, nil
}

// progress prints a groth16.Progress on stderr, prefixed.
func (b *bench) progress(prefix string) groth16.Progress {
	lines := groth16.ProgressLines(prefixWriter{b: b, prefix: prefix})
	return lines
}

type prefixWriter struct {
	b      *bench
	prefix string
}

func (w prefixWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.b.printf("%s: %s", w.prefix, line)
		}
	}
	return len(p), nil
}

func heapLive() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// params reads the parameters from -params-dir when they are there and fit
// the circuit, else generates them in memory.
func (b *bench) params(ctx context.Context, compiled *circuit.Compiled) (*node.ShapeParams, error) {
	o := b.o
	pr := &b.rep.Params
	pr.Dir = o.paramsDir
	b.mem.Reset()
	start := time.Now()
	name := b.shape.Name
	dev := 0
	if len(o.devices) > 0 {
		dev = o.devices[0]
	}
	if o.paramsDir != "" {
		file := circuit.ParamsPath(o.paramsDir, name)
		if !b.shape.Test {
			if p, err := ceremony.PathsIn(o.paramsDir, b.shape); err == nil {
				file = p.Params // Filecoin's file, by its official name
			}
		}
		b.printf("params: reading %s", file)
		var checker groth16.SubgroupChecker
		if !o.trusted {
			c, why, err := cuda.SelectSubgroupChecker(o.backend, cuda.Config{LibraryPath: o.cudaLibrary, Device: dev})
			if err != nil {
				return nil, err
			}
			checker = c
			pr.SubgroupCheck = why
			b.printf("%s", why)
		}
		sp, err := node.LoadShapeParams(ctx, name, o.paramsDir, o.trusted, checker, b.quietLog())
		switch {
		case err == nil:
			pr.HForm = groth16.HMonomial.String()
			pr.Source, pr.Why = "read", "read from "+file+", made for this circuit"
			if b.shape.Test && !fileExists(circuit.FingerprintPath(o.paramsDir, name)) {
				pr.Why += " (sizes checked; no circuit fingerprint beside them)"
			}
			pr.Seconds, pr.Bytes = time.Since(start).Seconds(), sp.Bytes()
			pr.Peaks = b.mem.Peaks()
			runtime.GC()
			debug.FreeOSMemory() // the decoding's garbage: gone before proving
			pr.HeapAfter = heapLive()
			b.printf("params: %s in %.1fs", pr.Why, pr.Seconds)
			if o.writeParams {
				b.note("-write-params: nothing written, the parameters were read from %s", o.paramsDir)
			}
			return sp, nil
		case errors.Is(err, os.ErrNotExist):
			pr.Why = "none in " + o.paramsDir
			b.printf("params: none in %s: generating them in memory", o.paramsDir)
		case errors.Is(err, node.ErrParams):
			pr.Why = err.Error()
			b.printf("params: not usable, generating them in memory instead: %v", err)
		default:
			return nil, err
		}
	} else {
		pr.Why = "no -params-dir"
	}
	pr.Source = "generated"
	fb, why, err := cuda.SelectFixedBase(o.backend, cuda.Config{LibraryPath: o.cudaLibrary, Device: dev})
	if err != nil {
		return nil, err
	}
	pr.FixedBase = why
	pr.HForm = o.hForm.String()
	opts := []groth16.SetupOption{groth16.SetupProgress(b.progress("params")), groth16.SetupFixedBase(fb), groth16.SetupHForm(o.hForm)}
	if o.setupSeed != "" {
		opts = append(opts, groth16.SetupSeed([]byte(o.setupSeed)))
		pr.ToxicWaste = "deterministic from -setup-seed: TEST ONLY, whoever knows the seed can forge proofs"
	} else {
		pr.ToxicWaste = "fresh random (crypto/rand), kept nowhere: good for this benchmark only, not Filecoin's parameters"
	}
	b.printf("params: Groth16 setup in memory (%s, H in %v form); toxic waste %s", why, o.hForm, pr.ToxicWaste)
	pk, err := compiled.Keys(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("params: setup: %w", err)
	}
	pr.Seconds = time.Since(start).Seconds()
	if o.convert {
		pr.Peaks = b.mem.Peaks() // the setup's; the conversion has its own
		b.printf("params: generated in %.1fs, H in monomial form", pr.Seconds)
		if pk, err = b.convert(ctx, compiled, pk, dev); err != nil {
			return nil, err
		}
		pr.HForm = pk.HForm.String()
	}
	sp, err := node.NewShapeParams(name, compiled, pk)
	if err != nil {
		return nil, err
	}
	pr.Bytes = sp.Bytes()
	b.printf("params: generated in %.1fs (%s GiB in the .params layout)", pr.Seconds, gib(pr.Bytes))
	if o.writeParams {
		if err := b.writeParams(compiled, pk); err != nil {
			return nil, err
		}
	}
	if !o.convert {
		pr.Peaks = b.mem.Peaks()
	}
	runtime.GC()
	debug.FreeOSMemory() // the setup's scalars and tables: gone before proving
	pr.HeapAfter = heapLive()
	return sp, nil
}

func (b *bench) writeParams(compiled *circuit.Compiled, pk *groth16.ProvingKey) error {
	dir, name := b.o.paramsDir, b.shape.Name
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	pp, vp, fp := circuit.ParamsPath(dir, name), circuit.VKPath(dir, name), circuit.FingerprintPath(dir, name)
	b.printf("params: writing %s", pp)
	if err := compiled.WriteParams(pk, pp, vp, fp); err != nil {
		return err
	}
	b.rep.Params.Written, b.rep.Params.WriteSecs = true, time.Since(start).Seconds()
	b.printf("params: wrote %s, %s and %s in %.1fs", pp, vp, fp, b.rep.Params.WriteSecs)
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func (b *bench) quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(b.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// prover selects the backend and loads the parameters onto every device:
// the worker's node.Prover.
func (b *bench) prover(ctx context.Context, sp *node.ShapeParams) (*node.Prover, error) {
	o := b.o
	be := &b.rep.Backend
	be.SynthesisCPUNote = "the CPU time (user+system) of the synthesis's own threads, summed over the goroutines that built the witness " +
		"and solved the templates (circuit.WithCPUTime, getrusage RUSAGE_THREAD; synthesis_core_s_threads true): exact whatever else runs; " +
		"where that cannot be read (not Linux), the process's CPU time between the start and the end of the synthesis, exact only when no " +
		"other partition was in flight (synthesis_overlapped false), otherwise an upper bound"
	// VRAM: device-wide memory in use, read through the CUDA library.
	var probe vramProbe
	before := map[int]int64{}
	if o.backend != backend.NameCPU {
		pr, count, err := openVRAMProbe(o.cudaLibrary)
		if err == nil {
			probe = pr
			for d := 0; d < count; d++ {
				if u, err := probe(d); err == nil {
					before[d] = u
				}
			}
		} else {
			be.VRAMNote = "no VRAM figures: " + err.Error()
		}
	}
	start := time.Now()
	b.printf("prover: backend %s, loading the parameters onto every device", o.backend)
	cfg := node.Config{ID: "c2-bench", Backend: o.backend, Devices: o.devices, GPUWorkersPerDevice: o.workers,
		Interlock: o.interlock, VRAMBudget: o.vramBudget, CPUThreads: o.cpuThreads, CUDALibrary: o.cudaLibrary,
		Residency: o.residency, Logger: b.log, Metrics: telemetry.NewMetrics(), Observer: b.observe}
	if o.quiet {
		cfg.Logger = b.quietLog()
	}
	p, err := node.NewProver(ctx, cfg, sp)
	if err != nil {
		return nil, err
	}
	be.Name, be.Why, be.Devices, be.Residency = p.Backend(), p.Why(), p.DeviceNames(), p.Residency(sp.Name())
	be.LoadSeconds = time.Since(start).Seconds()
	if be.HostKeyReleased = sp.HostKeyReleased(); be.HostKeyReleased {
		// Resident on every device: the host copy of the points is garbage
		// now (nothing else here holds it); return it before proving.
		runtime.GC()
		debug.FreeOSMemory()
		b.printf("prover: host copy of the parameters released (resident on every device): %s GiB", gib(sp.Bytes()))
	}
	if p.Backend() == backend.NameCUDA && probe != nil {
		be.VRAMParams = map[int]int64{}
		for _, d := range p.Devices() {
			if u, err := probe(d); err == nil {
				if _, ok := before[d]; ok {
					be.VRAMParams[d] = u - before[d]
				}
			}
		}
		b.mem.watchVRAM(probe, p.Devices())
		be.VRAMNote = "vram_used_peak_bytes: device-wide memory in use (cudaMemGetInfo total − free through the library, sampled every 250 ms: " +
			"includes the parameters, the stream-ordered allocator's cached blocks and any other process on the device); " +
			"vram_task_peak_bytes: the largest sum of the interlock's Task.DeviceBytes held at once on a device; " +
			"vram_params_bytes: the drop of free device memory across loading the parameters"
	} else if p.Backend() != backend.NameCUDA {
		be.VRAMNote = "backend " + p.Backend() + ": no device memory"
	}
	b.printf("prover: %s; parameters %s on %v in %.1fs", p.Why(), be.Residency, be.Devices, be.LoadSeconds)
	for d, v := range be.VRAMParams {
		b.printf("prover: device %d: parameters take %s GiB of VRAM", d, gib(v))
	}
	return p, nil
}

// runState is one run's bookkeeping, shared by its slots and the interlock
// observer.
type runState struct {
	start time.Time
	total int // partitions in the run

	mu       sync.Mutex
	bySlot   map[string]*Partition // the partition each slot is proving
	active   int                   // partitions in flight
	inSynth  map[*Partition]bool   // partitions in synthesis
	finished []*Partition
}

// observe receives every interlock event (node.Config.Observer): the task
// of the slot's current partition holds its device memory from the start
// of its upload to the end of its epilogue.
func (b *bench) observe(e interlock.Event) {
	rs := b.cur.Load()
	if rs == nil {
		return
	}
	now := time.Now()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	p := rs.bySlot[e.Who]
	if p == nil {
		return
	}
	switch {
	case e.Kind == interlock.EventStageStart && e.Stage == interlock.StageUpload:
		p.uploadStart = now
	case e.Kind == interlock.EventStageEnd && e.Stage == interlock.StageEpilogue:
		p.taskEnd = now
	}
}

func (rs *runState) synthStart(p *Partition) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.active > 0 {
		p.Overlapped = true
	}
	for q := range rs.inSynth {
		q.Overlapped = true
	}
	rs.active++
	rs.inSynth[p] = true
}

func (rs *runState) synthEnd(p *Partition) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.inSynth, p)
}

func (rs *runState) end(slot string, p *Partition) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !p.start.IsZero() {
		rs.active--
	}
	delete(rs.inSynth, p)
	delete(rs.bySlot, slot)
	rs.finished = append(rs.finished, p)
}

// runJob proves the job's partitions on the prover's slots, each slot
// taking the next partition when it is free (as queue slots do with
// Fetch(1)), and summarizes the run.
// runJob proves n partitions (cycling through the C1's) on the prover's
// slots and measures the run.
func (b *bench) runJob(ctx context.Context, p *node.Prover, sp *node.ShapeParams, label string, n int) (*Run, error) {
	slots := p.Slots()
	r := &Run{Interlock: string(p.Interlock()), WorkersPerDevice: p.WorkersPerDevice(), Devices: p.DeviceNames(),
		Slots: len(slots), VRAMBudget: p.VRAMBudget(), Partitions: n}
	r.Name = fmt.Sprintf("%s×%d", r.Interlock, r.WorkersPerDevice)
	b.printf("%s: interlock %s, %d per device, %d slots on %v: %d partitions", label, r.Interlock, r.WorkersPerDevice, len(slots), r.Devices, r.Partitions)

	jobs := make(chan int, n)
	for i := range n {
		jobs <- i
	}
	close(jobs)
	rs := &runState{total: n, bySlot: map[string]*Partition{}, inSynth: map[*Partition]bool{}}
	b.mem.Reset()
	rs.start = time.Now()
	b.cur.Store(rs)
	defer b.cur.Store(nil)
	cpu0 := cputime.Process()
	buf0 := p.BufferStats(sp.Name())
	var wg sync.WaitGroup
	var done atomic.Int32
	for _, s := range slots {
		wg.Add(1)
		go func(s *node.Slot) {
			defer wg.Done()
			for i := range jobs {
				if ctx.Err() != nil {
					return
				}
				b.provePartition(ctx, rs, s, sp, i, label, &done)
			}
		}(s)
	}
	wg.Wait()
	wall := time.Since(rs.start)
	cpu := cputime.Process() - cpu0
	r.Peaks = b.mem.Peaks()
	buf := p.BufferStats(sp.Name())
	r.Buffers = Buffers{SetBytes: buf.SetBytes, Limit: buf.Limit, Allocated: buf.Allocated - buf0.Allocated,
		Reused: buf.Reused - buf0.Reused, Waits: buf.Waits - buf0.Waits, Pinned: buf.Pinned}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.summarize(r, rs, wall, cpu, len(p.Devices()))
	b.printf("%s: %s done: %d/%d verified, wall %.2fs, %.2f partitions/min (steady %.2f), latency median %.2fs max %.2fs",
		label, r.Name, r.Verified, r.Partitions, r.Wall, r.Throughput, r.SteadyThroughput, r.LatencyMedian, r.LatencyMax)
	return r, nil
}

func (b *bench) provePartition(ctx context.Context, rs *runState, s *node.Slot, sp *node.ShapeParams, i int, label string, done *atomic.Int32) {
	k := i % b.shape.Partitions
	pt := &Partition{Index: i, Partition: k, Slot: s.Name(), Device: s.Device()}
	rs.mu.Lock()
	rs.bySlot[s.Name()] = pt
	rs.mu.Unlock()
	b.printf("%s: partition %d (C1 partition %d) on %s: synthesizing", label, i, k, s.Name())
	res, err := s.ProvePartition(ctx, sp.Name(), b.out, k, func(_ context.Context, stage string) error {
		switch stage {
		case node.StageSynthesize:
			pt.start = time.Now()
			rs.synthStart(pt)
			pt.synthCPU0 = cputime.Process()
		case node.StageProve:
			pt.SynthCPU = (cputime.Process() - pt.synthCPU0).Seconds()
			rs.synthEnd(pt)
		}
		return nil
	})
	end := time.Now()
	rs.end(s.Name(), pt)
	if pt.start.IsZero() {
		pt.start = end
	}
	pt.Start, pt.End = pt.start.Sub(rs.start).Seconds(), end.Sub(rs.start).Seconds()
	pt.Latency = end.Sub(pt.start).Seconds()
	bt := res.Interlock.Backend
	pt.Synth, pt.LockWait, pt.Prove, pt.Verify = secs(res.Synthesis), secs(res.LockWait), secs(res.Prove), secs(res.Verify)
	if res.SynthesisCPU > 0 { // the synthesis threads' own CPU time: exact, overlapped or not
		pt.SynthCPU, pt.SynthCPUThreads = secs(res.SynthesisCPU), true
	}
	pt.Prepare, pt.Upload, pt.Compute, pt.Finish = secs(bt.Prepare), secs(bt.Upload), secs(bt.Compute), secs(bt.Finish)
	pt.DeviceS = pt.Upload + pt.Compute
	pt.UploadDirect, pt.UploadCoded = bt.UploadDirectBytes, bt.UploadCodedBytes
	pt.H, pt.MSMH, pt.MSML, pt.MSMA, pt.MSMBG1, pt.MSMBG2 = secs(bt.H), secs(bt.MSMH), secs(bt.MSML), secs(bt.MSMA), secs(bt.MSMBG1), secs(bt.MSMBG2)
	pt.MSMHSplit = bt.MSMHSplitBits
	pt.DeviceBytes = res.Interlock.DeviceBytes
	if pt.taskEnd.IsZero() && !pt.uploadStart.IsZero() {
		pt.taskEnd = end
	}
	status := "verified"
	if err != nil {
		pt.Error = err.Error()
		status = "FAILED: " + err.Error()
	} else {
		pt.Verified = true
	}
	n := done.Add(1)
	b.printf("%s: partition %d (C1 %d) on %s: synth %.2fs (%.1f core-s%s), wait %.3fs, upload %.3fs, compute %.3fs, verify %.3fs, latency %.2fs: %s (%d/%d)",
		label, i, k, s.Name(), pt.Synth, pt.SynthCPU, map[bool]string{true: ", overlapped", false: ""}[pt.Overlapped && !pt.SynthCPUThreads],
		pt.LockWait, pt.Upload, pt.Compute, pt.Verify, pt.Latency, status, n, rs.total)
}

// summarize fills the run's figures from its partitions.
func (b *bench) summarize(r *Run, rs *runState, wall, cpu time.Duration, devices int) {
	r.PartitionsDetail = rs.finished
	r.Wall = wall.Seconds()
	var lat, synth, synthCPU, synthCPUExact, dev, up, comp, wait, ver []float64
	busy := 0.0
	first, last := math.Inf(1), math.Inf(-1) // verified partitions' ends
	for _, p := range rs.finished {
		if !p.Verified {
			r.Failed++
			continue
		}
		r.Verified++
		first, last = min(first, p.End), max(last, p.End)
		lat = append(lat, p.Latency)
		synth = append(synth, p.Synth)
		synthCPU = append(synthCPU, p.SynthCPU)
		if !p.Overlapped || p.SynthCPUThreads {
			synthCPUExact = append(synthCPUExact, p.SynthCPU)
		}
		dev = append(dev, p.DeviceS)
		up = append(up, p.Upload)
		comp = append(comp, p.Compute)
		wait = append(wait, p.LockWait)
		ver = append(ver, p.Verify)
		busy += p.DeviceS
		r.LockWaitTotal += p.LockWait
		r.LockWaitMax = max(r.LockWaitMax, p.LockWait)
		r.LatencyMax = max(r.LatencyMax, p.Latency)
	}
	r.Failed += r.Partitions - len(rs.finished) // never started (cancelled)
	if r.Wall > 0 {
		r.Throughput = float64(r.Verified) / r.Wall * 60
		r.CoresUsed = cpu.Seconds() / r.Wall
		if devices > 0 {
			r.DeviceBusy = busy / (r.Wall * float64(devices))
		}
	}
	if len(rs.finished) > 0 {
		r.CoreSeconds = cpu.Seconds() / float64(len(rs.finished))
	}
	if r.Verified >= 2 && last > first {
		r.SteadyThroughput = float64(r.Verified-1) / (last - first) * 60
	}
	r.LatencyMedian, r.SynthMedian, r.DeviceMedian = median(lat), median(synth), median(dev)
	r.UploadMedian, r.ComputeMedian, r.LockWaitMedian, r.VerifyMedian = median(up), median(comp), median(wait), median(ver)
	if len(synthCPUExact) > 0 {
		r.SynthCPUMedian, r.SynthCPUExact = median(synthCPUExact), true
	} else {
		r.SynthCPUMedian = median(synthCPU)
	}
	r.VRAMTaskPeak = taskPeak(rs.finished)
}

// taskPeak is the largest sum of DeviceBytes held at once on one device.
func taskPeak(ps []*Partition) int64 {
	type ev struct {
		t     time.Time
		delta int64
	}
	byDev := map[int][]ev{}
	for _, p := range ps {
		if p.DeviceBytes == 0 || p.uploadStart.IsZero() {
			continue
		}
		byDev[p.Device] = append(byDev[p.Device], ev{p.uploadStart, p.DeviceBytes}, ev{p.taskEnd, -p.DeviceBytes})
	}
	var peak int64
	for _, evs := range byDev {
		// releases before acquisitions at the same instant
		slices.SortFunc(evs, func(a, b ev) int {
			if c := a.t.Compare(b.t); c != 0 {
				return c
			}
			return cmp.Compare(a.delta, b.delta)
		})
		var cur int64
		for _, e := range evs {
			cur += e.delta
			peak = max(peak, cur)
		}
	}
	return peak
}
