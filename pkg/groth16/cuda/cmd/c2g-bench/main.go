//go:build cgo

// Command c2g-bench times the CUDA prover on a GPU host: G1/G2 MSMs with
// random and 85 %-0/1 scalars, Fr NTTs, and a synthetic partition at the
// 32 GiB PoRep shape (parameters resident in device memory; aux values
// with a PoRep witness's shares of 0, 1 and r - 1, -partition-profile),
// end to end;
// with -fixed-base, the setup's fixed-base multiplications too.
// It prints one line per measurement as it goes, a table at the end, and
// writes the numbers as JSON.
//
//	c2g-bench -lib cuda/build/libc2groth16.so -json bench.json
//
// Data is generated on the device (points, scalars for MSM/NTT) or on the
// host with all cores (the partition's witness), never timed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/buildinfo"
	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
)

// result is one measurement.
type result struct {
	Name       string  `json:"name"`
	LogN       int     `json:"log_n,omitempty"`
	N          int     `json:"n"`
	Scalars    string  `json:"scalars,omitempty"`
	DeviceMS   float64 `json:"device_ms"`
	WallMS     float64 `json:"wall_ms"`
	Reps       int     `json:"reps"`
	WindowBits int     `json:"window_bits,omitempty"`
	Anchor     float64 `json:"anchor_ms,omitempty"`
	Note       string  `json:"note,omitempty"`
}

type report struct {
	Date    string          `json:"date"`
	Device  cuda.DeviceInfo `json:"device"`
	Library string          `json:"library"`
	Command string          `json:"command"`
	Results []result        `json:"results"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "c2g-bench:", err)
		os.Exit(1)
	}
}

func parseLogs(s string) ([]int, error) {
	var out []int
	if s == "" {
		return nil, nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > 28 {
			return nil, fmt.Errorf("bad size %q (want log2 sizes 1..28)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func run(args []string, stdout io.Writer) error {
	if buildinfo.Requested(args) {
		fmt.Fprintln(stdout, buildinfo.Line("c2g-bench"))
		return nil
	}
	fs := flag.NewFlagSet("c2g-bench", flag.ContinueOnError)
	buildinfo.Register(fs)
	lib := fs.String("lib", "", "libc2groth16.so (default $"+cuda.EnvLibrary+")")
	dev := fs.Int("device", 0, "CUDA device index")
	g1s := fs.String("g1", "20,22,24,26", "log2 sizes of the G1 MSMs")
	g2s := fs.String("g2", "20,22,24", "log2 sizes of the G2 MSMs")
	ntts := fs.String("ntt", "20,22,24,26,27", "log2 sizes of the NTTs")
	fbs := fs.String("fixed-base", "", "log2 sizes of the setup's fixed-base multiplications, G1 and G2 (host memory in and out; off by default)")
	sgs := fs.String("subgroup", "", "log2 sizes of the parameter points' subgroup check, G1 and G2 (host memory in; off by default)")
	dfts := fs.String("dft", "", "log2 sizes (up to 27) of the G1 group DFT, forward, host memory in and out (off by default; one timed run per size, after a warm-up below 2^22)")
	reps := fs.Int("reps", 3, "timed repetitions (the median is reported) after one warm-up")
	part := fs.Bool("partition", true, "run the synthetic 32 GiB-shape partition")
	partLog := fs.Int("partition-log", 27, "log2 of the partition's domain")
	partRows := fs.Int("partition-rows", 130_278_328, "partition rows (constraints + inputs)")
	partAux := fs.Int("partition-aux", 130_170_000, "partition aux variables")
	partIn := fs.Int("partition-inputs", 328, "partition public inputs")
	partProfile := fs.String("partition-profile", "porep", "the partition's values: porep (the previous PoRep circuit's profile, kept for comparison — aux 85.2 % 0/1, 13.6 % r-1, 1.2 % random; a 98.3 % 0/1, 0.2 % r-1; b 71.8 % 0/1, 27.0 % r-1; c = a∘b) or 85-01 (aux 85 % 0/1, the rest random, a and b random: the profile assumed before it was measured)")
	partPinned := fs.Bool("partition-pinned", true, "page-lock the partition's witness and give it value codes, as the worker's pooled sets are (the upload sends the codes; C2G_UPLOAD_CODES=off copies the vectors whole); false: upload from ordinary memory through the staging buffers")
	partHForm := fs.String("partition-h-form", "coset-lagrange", "the synthetic key's H form: coset-lagrange (four NTTs on H's path, the in-memory setup's default) or monomial (bellperson's, six NTTs)")
	partSlots := fs.Int("partition-slots", 1, "also prove the partition this many at once (each slot -reps times, after the timed single runs): the GPU's throughput when slots overlap, as a worker's gpu_workers_per_device do without a host to wait for; 1: off")
	jsonOut := fs.String("json", "", "write the results as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	g1Logs, err := parseLogs(*g1s)
	if err != nil {
		return err
	}
	g2Logs, err := parseLogs(*g2s)
	if err != nil {
		return err
	}
	nttLogs, err := parseLogs(*ntts)
	if err != nil {
		return err
	}
	fbLogs, err := parseLogs(*fbs)
	if err != nil {
		return err
	}
	sgLogs, err := parseLogs(*sgs)
	if err != nil {
		return err
	}
	dftLogs, err := parseLogs(*dfts)
	if err != nil {
		return err
	}
	for _, v := range dftLogs {
		if v > 27 {
			return fmt.Errorf("-dft 2^%d: the group DFT takes at most 2^27 points", v)
		}
	}
	if *reps < 1 {
		return fmt.Errorf("reps must be at least 1")
	}
	if *partSlots < 1 || *partSlots > 8 {
		return fmt.Errorf("-partition-slots %d: want 1 to 8", *partSlots)
	}
	prof, err := partitionProfileNamed(*partProfile)
	if err != nil {
		return err
	}
	b, err := cuda.New(cuda.Config{LibraryPath: *lib, Device: *dev, Residency: cuda.ResidencyDevice,
		Progress: groth16.ProgressLines(stdout)})
	if err != nil {
		return err
	}
	l := b.Library()
	rep := &report{Date: time.Now().UTC().Format(time.RFC3339), Device: b.Device(), Library: l.Path(),
		Command: "c2g-bench " + strings.Join(args, " ")}
	fmt.Fprintf(stdout, "device %d: %s, %d SMs, %d MiB\n", *dev, rep.Device.Name, rep.Device.SMs, rep.Device.TotalBytes>>20)
	add := func(r result) {
		rep.Results = append(rep.Results, r)
		fmt.Fprintf(stdout, "%-22s 2^%-2d %-8s device %9.2f ms  wall %9.2f ms  c=%-2d %s\n",
			r.Name, r.LogN, r.Scalars, r.DeviceMS, r.WallMS, r.WindowBits, anchorText(r))
	}

	if err := benchMSM(l, *dev, 1, g1Logs, *reps, add); err != nil {
		return err
	}
	if err := benchMSM(l, *dev, 2, g2Logs, *reps, add); err != nil {
		return err
	}
	if err := benchNTT(l, *dev, nttLogs, *reps, add); err != nil {
		return err
	}
	if err := benchFixedBase(l, *dev, fbLogs, *reps, add); err != nil {
		return err
	}
	if err := benchSubgroup(l, *dev, sgLogs, *reps, add); err != nil {
		return err
	}
	if err := benchDFT(l, *dev, dftLogs, stdout, add); err != nil {
		return err
	}
	if *part {
		hForm, err := groth16.ParseHForm(*partHForm)
		if err != nil {
			return fmt.Errorf("-partition-h-form: %w", err)
		}
		if err := benchPartition(b, *partLog, *partRows, *partIn, *partAux, prof, hForm, *partPinned, *reps, *partSlots, stdout, add); err != nil {
			return err
		}
	}

	fmt.Fprintln(stdout, "\nsummary (median device ms; anchor = sppark on the same H200, data on GPU)")
	fmt.Fprintf(stdout, "%-22s %-5s %-8s %10s %10s %10s\n", "what", "size", "scalars", "device ms", "wall ms", "anchor ms")
	for _, r := range rep.Results {
		a := "-"
		if r.Anchor > 0 {
			a = fmt.Sprintf("%.1f", r.Anchor)
		}
		fmt.Fprintf(stdout, "%-22s 2^%-3d %-8s %10.2f %10.2f %10s\n", r.Name, r.LogN, r.Scalars, r.DeviceMS, r.WallMS, a)
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func anchorText(r result) string {
	if r.Anchor == 0 {
		return r.Note
	}
	return fmt.Sprintf("(anchor %.1f ms, %.2fx) %s", r.Anchor, r.Anchor/r.DeviceMS, r.Note)
}

// anchors: sppark 17278d7 on one H200, data on the GPU (docs/perf/README.md,
// "CUDA kernels: c2g-bench on the H200").
func msmAnchor(group, logN int, scalars string) float64 {
	if group == 1 && logN == 26 {
		if scalars == "random" {
			return 570
		}
		return 224
	}
	return 0
}

func benchMSM(l *cuda.Library, dev, group int, logs []int, reps int, add func(result)) error {
	if len(logs) == 0 {
		return nil
	}
	maxLog := slices.Max(logs)
	n := 1 << maxLog
	pointSize := int64(96)
	if group == 2 {
		pointSize = 192
	}
	bases, err := l.Alloc(dev, int64(n)*pointSize)
	if err != nil {
		return err
	}
	defer bases.Free()
	scal, err := l.Alloc(dev, int64(n)*32)
	if err != nil {
		return err
	}
	defer scal.Free()
	t0 := time.Now()
	if group == 1 {
		err = bases.FillRandomG1(n, 1)
	} else {
		err = bases.FillRandomG2(n, 1)
	}
	if err != nil {
		return err
	}
	fmt.Printf("generated 2^%d random G%d points in %v\n", maxLog, group, time.Since(t0).Round(time.Millisecond))
	for _, logN := range logs {
		for _, kind := range []struct {
			name   string
			frac01 float64
		}{{"random", 0}, {"85%-0/1", 0.85}} {
			if group == 2 && kind.frac01 > 0 {
				continue
			}
			m := 1 << logN
			if err := scal.FillRandomFr(m, uint64(logN), kind.frac01); err != nil {
				return err
			}
			var dms, wms []float64
			var window int
			for r := 0; r <= reps; r++ {
				t := time.Now()
				var st cuda.MSMStats
				if group == 1 {
					_, st, err = l.MSMG1(bases, scal, m)
				} else {
					_, st, err = l.MSMG2(bases, scal, m)
				}
				if err != nil {
					return err
				}
				if r > 0 {
					dms = append(dms, st.DeviceMillis)
					wms = append(wms, float64(time.Since(t).Microseconds())/1000)
				}
				window = st.WindowBits
			}
			add(result{Name: fmt.Sprintf("msm_g%d", group), LogN: logN, N: m, Scalars: kind.name,
				DeviceMS: median(dms), WallMS: median(wms), Reps: reps, WindowBits: window,
				Anchor: msmAnchor(group, logN, kind.name)})
		}
	}
	return nil
}

func benchNTT(l *cuda.Library, dev int, logs []int, reps int, add func(result)) error {
	if len(logs) == 0 {
		return nil
	}
	maxLog := slices.Max(logs)
	buf, err := l.Alloc(dev, int64(32)<<maxLog)
	if err != nil {
		return err
	}
	defer buf.Free()
	for _, logN := range logs {
		if err := buf.FillRandomFr(1<<logN, 99, 0); err != nil {
			return err
		}
		for _, mode := range []struct {
			name           string
			inverse, coset bool
		}{{"ntt_fwd", false, false}, {"ntt_inv_coset", true, true}} {
			var dms, wms []float64
			for r := 0; r <= reps; r++ {
				t := time.Now()
				ms, err := l.NTT(buf, logN, mode.inverse, mode.coset)
				if err != nil {
					return err
				}
				if r > 0 {
					dms = append(dms, ms)
					wms = append(wms, float64(time.Since(t).Microseconds())/1000)
				}
			}
			var anchor float64
			if logN == 27 && mode.name == "ntt_fwd" {
				anchor = 44.4
			}
			add(result{Name: mode.name, LogN: logN, N: 1 << logN, DeviceMS: median(dms), WallMS: median(wms),
				Reps: reps, Anchor: anchor, Note: "natural order in/out, incl. bit-reversal"})
		}
	}
	return nil
}

// benchDFT times the G1 group DFT (Library.DFTG1) as the ceremony H
// conversion runs it (groth16.ConvertHCosetLagrange: inverse, the input
// scaled by c·x^j on the device, x = g⁻¹) on random points drawn on the
// device, one run per size (after an untimed one below 2^22, where start-up
// costs would show): device time of the scale and the stages, and wall time
// with the copies in and out of pageable host memory.
func benchDFT(l *cuda.Library, dev int, logs []int, stdout io.Writer, add func(result)) error {
	if len(logs) == 0 {
		return nil
	}
	n := 1 << slices.Max(logs)
	buf, err := l.Alloc(dev, int64(n)*96)
	if err != nil {
		return err
	}
	t0 := time.Now()
	err = buf.FillRandomG1(n, 28)
	var pts []curve.G1Affine
	if err == nil {
		pts, err = buf.ReadG1(n)
	}
	buf.Free()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "generated 2^%d random G1 points in %v\n", slices.Max(logs), time.Since(t0).Round(time.Millisecond))
	var sc groth16.DFTScale
	sc.C.SetUint64(28).Inverse(&sc.C)
	sc.X.SetUint64(7).Inverse(&sc.X) // g⁻¹
	for _, logN := range logs {
		m := 1 << logN
		runs := 1
		if logN < 22 {
			runs = 2
		}
		var st cuda.DFTStats
		for r := 0; r < runs; r++ {
			last := time.Now()
			progress := func(done, total int64) {
				if time.Since(last) >= 15*time.Second {
					last = time.Now()
					fmt.Fprintf(stdout, "dft 2^%d: %.1f %% of %d scalar multiplications\n", logN, 100*float64(done)/float64(total), total)
				}
			}
			if st, err = l.DFTG1(context.Background(), dev, pts[:m], true, &sc, progress); err != nil {
				return err
			}
		}
		muls := st.ScalarMuls + st.ScaleMuls
		add(result{Name: "dft_g1_inv_scaled", LogN: logN, N: m, DeviceMS: st.DeviceMillis, WallMS: st.Millis, Reps: 1,
			WindowBits: st.WindowBits,
			Note: fmt.Sprintf("%d twiddle + %d scale muls, %.1f ns each (device), affine table %v, host memory in/out",
				st.ScalarMuls, st.ScaleMuls, st.DeviceMillis*1e6/float64(max(muls, 1)), st.AffineTable)})
	}
	return nil
}

// medianWallMS runs f once unmeasured, then reps times, and returns the
// median wall time in milliseconds.
func medianWallMS(reps int, f func() error) (float64, error) {
	var wms []float64
	for r := 0; r <= reps; r++ {
		t := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if r > 0 {
			wms = append(wms, float64(time.Since(t).Microseconds())/1000)
		}
	}
	return median(wms), nil
}

// benchFixedBase times the setup's fixed-base multiplications with the
// window groth16.SetupR1CS picks at the 32 GiB shape (16 bits, 17 windows),
// wall time with the host copies (scalars in, affine points out).
func benchFixedBase(l *cuda.Library, dev int, logs []int, reps int, add func(result)) error {
	if len(logs) == 0 {
		return nil
	}
	const c = 16
	_, _, g1, g2 := curve.Generators()
	t0 := time.Now()
	t1, windows, err := groth16.FixedBaseTableG1(context.Background(), &g1, c)
	if err != nil {
		return err
	}
	t2, _, err := groth16.FixedBaseTableG2(context.Background(), &g2, c)
	if err != nil {
		return err
	}
	fmt.Printf("built the G1 and G2 comb tables (2^%d × %d) in %v\n", c-1, windows, time.Since(t0).Round(time.Millisecond))
	n := 1 << slices.Max(logs)
	sc := make([]fr.Element, n)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range sc {
		for k := range sc[i] {
			sc[i][k] = rng.Uint64()
		}
		sc[i][3] &= 1<<62 - 1 // < 2^254 < r: a valid Montgomery representation
	}
	out1 := make([]curve.G1Affine, n)
	out2 := make([]curve.G2Affine, n)
	for _, logN := range logs {
		m := 1 << logN
		for _, group := range []int{1, 2} {
			w, err := medianWallMS(reps, func() error {
				if group == 1 {
					return l.FixedBaseG1(dev, t1, c, windows, sc[:m], out1[:m])
				}
				return l.FixedBaseG2(dev, t2, c, windows, sc[:m], out2[:m])
			})
			if err != nil {
				return err
			}
			add(result{Name: fmt.Sprintf("fixed_base_g%d", group), LogN: logN, N: m, WallMS: w, Reps: reps,
				Note: fmt.Sprintf("%.0f ns/point, host memory in and out", w*1e6/float64(m))})
		}
	}
	return nil
}

// benchSubgroup times the worker's start-up check of parameter points
// (c2g_subgroup_check), wall time from pageable host memory as the worker
// holds them; the points (random multiples of the generator, drawn on the
// device) must all pass. The last line extrapolates to a 32 GiB file's
// points.
func benchSubgroup(l *cuda.Library, dev int, logs []int, reps int, add func(result)) error {
	if len(logs) == 0 {
		return nil
	}
	n := 1 << slices.Max(logs)
	buf, err := l.Alloc(dev, int64(n)*192)
	if err != nil {
		return err
	}
	defer buf.Free()
	if err := buf.FillRandomG1(n, 11); err != nil {
		return err
	}
	p1, err := buf.ReadG1(n)
	if err != nil {
		return err
	}
	if err := buf.FillRandomG2(n, 12); err != nil {
		return err
	}
	p2, err := buf.ReadG2(n)
	if err != nil {
		return err
	}
	perPoint := map[int]float64{}
	for _, logN := range logs {
		m := 1 << logN
		for _, group := range []int{1, 2} {
			w, err := medianWallMS(reps, func() error {
				var first int
				var err error
				if group == 1 {
					first, err = l.FirstNotInSubgroupG1(dev, p1[:m])
				} else {
					first, err = l.FirstNotInSubgroupG2(dev, p2[:m])
				}
				if err == nil && first != -1 {
					err = fmt.Errorf("subgroup check g%d: point %d of the generator's multiples reported outside the subgroup", group, first)
				}
				return err
			})
			if err != nil {
				return err
			}
			perPoint[group] = w / float64(m)
			add(result{Name: fmt.Sprintf("subgroup_g%d", group), LogN: logN, N: m, WallMS: w, Reps: reps,
				Note: fmt.Sprintf("%.1f ns/point, host memory in", w*1e6/float64(m))})
		}
	}
	// the 32 GiB shape's proving key: h, l, a, b_g1 in G1, b_g2 in G2
	const g1Points, g2Points = 134217727 + 130170000 + 129779141 + 33060847, 33060847
	est := perPoint[1]*g1Points + perPoint[2]*g2Points
	add(result{Name: "subgroup_32GiB_est", LogN: 27, WallMS: est, Reps: reps,
		Note: fmt.Sprintf("estimate from the largest size: %d G1 + %d G2 points", g1Points, g2Points)})
	return nil
}

// partitionProfile is the mix of the synthetic partition's aux values.
type partitionProfile struct {
	frac01, fracMinusOne float64           // aux
	a, b                 cuda.ValueProfile // rows of a and b (c = a∘b)
	note                 string
}

// partitionProfileNamed looks up -partition-profile.
func partitionProfileNamed(name string) (partitionProfile, error) {
	p, ok := partitionProfiles[name]
	if !ok {
		return p, fmt.Errorf("-partition-profile %q is not 85-01 or porep", name)
	}
	return p, nil
}

var partitionProfiles = map[string]partitionProfile{
	"85-01": {0.85, 0, cuda.ValueProfile{}, cuda.ValueProfile{}, "85% 0/1 aux, random a and b"},
	// the profile of the PoRep circuit c2cluster had before bellperson's
	// R1CS (aux 55.5 % 0, 29.7 % 1, 13.6 % r-1, 1.2 % other; a 49.2 % 0,
	// 49.1 % 1, 0.2 % r-1; b 24.2 / 47.6 / 27.0 %), kept for comparison with
	// earlier runs; the current circuit's: BenchmarkWitnessProfile in
	// pkg/porep/circuit (real partitions: c2-bench)
	"porep": {0.852, 0.136, cuda.ValueProfile{Frac01: 0.983, FracMinusOne: 0.002}, cuda.ValueProfile{Frac01: 0.718, FracMinusOne: 0.270},
		"PoRep profile: aux 85.2% 0/1, 13.6% r-1; a 98.3% 0/1; b 71.8% 0/1, 27.0% r-1"},
}

func benchPartition(b *cuda.Backend, logN, rows, inputs, aux int, prof partitionProfile, hForm groth16.HForm, pinned bool, reps, slots int, out io.Writer, add func(result)) error {
	ctx := context.Background()
	domain := 1 << logN
	if rows > domain {
		rows = domain
	}
	t0 := time.Now()
	w, sh := cuda.NewSyntheticWitness(cuda.SyntheticWitnessSpec{Rows: rows, Domain: domain, Inputs: inputs, Aux: aux,
		Frac01: prof.frac01, FracMinusOne: prof.fracMinusOne, A: prof.a, B: prof.b, Codes: pinned,
		ADensity: 0.997, BDensity: 0.254, Seed: 1})
	sh.HForm = hForm
	fmt.Fprintf(out, "partition: witness of %d rows, %d aux (|A| %d, |B| %d) drawn in %v\n",
		rows, aux, sh.A, sh.B, time.Since(t0).Round(time.Millisecond))
	if pinned { // as a worker's pooled set: page-locked once, with value codes
		t0 = time.Now()
		release, err := b.RegisterWitness(w)
		if err != nil {
			return err
		}
		defer release()
		fmt.Fprintf(out, "partition: witness page-locked in %v\n", time.Since(t0).Round(time.Millisecond))
	}
	t0 = time.Now()
	key, err := b.LoadSynthetic(ctx, sh, 7)
	if err != nil {
		return err
	}
	defer key.Close()
	fmt.Fprintf(out, "partition: synthetic parameters (resident) generated in %v\n", time.Since(t0).Round(time.Millisecond))
	var up, comp, total, hms, mh, ml, ma, mb1, mb2, devUp, devComp []float64
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for r := 0; r <= reps; r++ {
		start := time.Now()
		task, err := provePartition(ctx, key, w, func(t groth16.Task) {
			if r == 0 {
				fmt.Fprintf(out, "partition: DeviceBytes %d MiB\n", t.DeviceBytes()>>20)
			}
		})
		if err != nil {
			return err
		}
		el := time.Since(start)
		tm := task.Timings()
		du, dc := task.(interface{ DeviceMillis() (float64, float64) }).DeviceMillis()
		lab := "after"
		if task.(interface{ Overlapped() bool }).Overlapped() {
			lab = "beside"
		}
		split := ""
		if c := tm.MSMHSplitBits; c > 0 {
			split = fmt.Sprintf(" on split bases, c=%d", c)
		}
		task.Release()
		fmt.Fprintf(out, "partition rep %d: upload %v compute %v (h %v, msm h %v%s; l %v a %v b_g1 %v b_g2 %v %s them) finish %v total %v\n",
			r, tm.Upload.Round(time.Millisecond), tm.Compute.Round(time.Millisecond), tm.H.Round(time.Millisecond),
			tm.MSMH.Round(time.Millisecond), split, tm.MSML.Round(time.Millisecond), tm.MSMA.Round(time.Millisecond),
			tm.MSMBG1.Round(time.Millisecond), tm.MSMBG2.Round(time.Millisecond), lab, tm.Finish.Round(time.Millisecond),
			el.Round(time.Millisecond))
		if r == 0 {
			continue
		}
		up = append(up, ms(tm.Upload))
		comp = append(comp, ms(tm.Compute))
		total = append(total, ms(el))
		hms = append(hms, ms(tm.H))
		mh = append(mh, ms(tm.MSMH))
		ml = append(ml, ms(tm.MSML))
		ma = append(ma, ms(tm.MSMA))
		mb1 = append(mb1, ms(tm.MSMBG1))
		mb2 = append(mb2, ms(tm.MSMBG2))
		devUp = append(devUp, du)
		devComp = append(devComp, dc)
	}
	note := fmt.Sprintf("rows %d, aux %d, |A| %d, |B| %d, H %v, %s", rows, aux, sh.A, sh.B, hForm, prof.note)
	var anchor float64
	if logN == 27 {
		anchor = 1500 // the first target for the 32 GiB shape (issue 5)
	}
	add(result{Name: "partition_compute", LogN: logN, N: rows, DeviceMS: median(devComp), WallMS: median(comp), Reps: reps,
		Anchor: anchor, Note: note})
	add(result{Name: "partition_upload", LogN: logN, N: rows, DeviceMS: median(devUp), WallMS: median(up), Reps: reps})
	add(result{Name: "partition_end_to_end", LogN: logN, N: rows, DeviceMS: median(devUp) + median(devComp),
		WallMS: median(total), Reps: reps, Note: "prepare+upload+compute+finish"})
	for _, s := range []struct {
		name string
		v    []float64
	}{{"partition_h", hms}, {"partition_msm_h", mh}, {"partition_msm_l", ml}, {"partition_msm_a", ma},
		{"partition_msm_b_g1", mb1}, {"partition_msm_b_g2", mb2}} {
		add(result{Name: s.name, LogN: logN, N: rows, DeviceMS: median(s.v), WallMS: median(s.v), Reps: reps})
	}
	if slots > 1 {
		return benchPartitionSlots(ctx, key, w, logN, rows, reps, slots, out, add)
	}
	return nil
}

// provePartition runs one task through prepare, upload, compute and finish
// (prepared, when given, sees it before the upload) and returns it for its
// timings; the caller releases it.
func provePartition(ctx context.Context, key groth16.Key, w *groth16.Synthesized, prepared func(groth16.Task)) (groth16.Task, error) {
	rnd, err := groth16.NewRandomness()
	if err != nil {
		return nil, err
	}
	task, err := key.Prepare(ctx, w, rnd)
	if err != nil {
		return nil, err
	}
	if prepared != nil {
		prepared(task)
	}
	if err := task.Upload(ctx); err != nil {
		task.Release()
		return nil, err
	}
	if err := task.Compute(ctx); err != nil {
		task.Release()
		return nil, err
	}
	if _, err := task.Finish(ctx); err != nil {
		task.Release()
		return nil, err
	}
	return task, nil
}

// benchPartitionSlots proves the partition from `slots` goroutines at once,
// reps times each, and reports the wall time per partition: what the GPU
// sustains when tasks overlap (one task's upload and reductions beside
// another's NTTs and accumulations).
func benchPartitionSlots(ctx context.Context, key groth16.Key, w *groth16.Synthesized, logN, rows, reps, slots int,
	out io.Writer, add func(result)) error {
	errs := make([]error, slots)
	var done atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for s := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range reps {
				task, err := provePartition(ctx, key, w, nil)
				if err != nil {
					errs[s] = err
					return
				}
				task.Release()
				fmt.Fprintf(out, "partition slots %d: %d of %d proved (%v)\n", slots, done.Add(1), slots*reps,
					time.Since(start).Round(time.Millisecond))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	per := float64(time.Since(start).Microseconds()) / 1000 / float64(slots*reps)
	add(result{Name: fmt.Sprintf("partition_slots_%d", slots), LogN: logN, N: rows, WallMS: per, Reps: slots * reps,
		Note: fmt.Sprintf("wall time per partition, %d tasks at once, %d each", slots, reps)})
	return nil
}
