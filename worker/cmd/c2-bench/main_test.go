package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
)

// testShape is the smallest shape with several partitions (~250 k
// constraints, domain 2^18), as in the worker's tests.
const testShape = "test-micro"

// bench runs the whole command in process and returns its JSON report,
// stdout and error.
func benchRun(t *testing.T, args ...string) (*Report, string, error) {
	t.Helper()
	return benchRunCut(t, "", args...)
}

// benchRunCut is benchRun with the command's context cancelled as soon as
// its progress prints a line containing cut (never when cut is empty): a
// deadline or a signal at a known point.
func benchRunCut(t *testing.T, cut string, args ...string) (*Report, string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bench.json")
	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stderr := &cancelOn{cut: cut, cancel: cancel}
	err := run(ctx, append(args, "-json", out, "-quiet"), &stdout, stderr)
	t.Logf("stderr:\n%s", stderr.String())
	t.Logf("stdout:\n%s", stdout.String())
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		return nil, stdout.String(), err
	}
	var r Report
	require.NoError(t, json.Unmarshal(data, &r))
	return &r, stdout.String(), err
}

// cancelOn keeps what is written to it and calls cancel when a write
// contains cut (c2-bench writes each progress line at once).
type cancelOn struct {
	mu     sync.Mutex
	cut    string
	cancel func()
	bytes.Buffer
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cut != "" && bytes.Contains(p, []byte(w.cut)) {
		w.cancel()
	}
	return w.Buffer.Write(p)
}

func (w *cancelOn) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.Buffer.String()
}

// requireRun checks one run's figures: every partition proved and
// verified, counts right, times positive.
func requireRun(t *testing.T, r *Run, slots int) {
	t.Helper()
	require.Equal(t, 2, r.Partitions, r.Name)
	require.Equal(t, 2, r.Verified, r.Name)
	require.Zero(t, r.Failed, r.Name)
	require.Equal(t, slots, r.Slots, r.Name)
	require.Len(t, r.PartitionsDetail, 2, r.Name)
	// The witnesses lived in the pool's buffer sets: one per slot at most,
	// every synthesis served by one.
	require.Equal(t, slots, r.Buffers.Limit, r.Name)
	require.LessOrEqual(t, r.Buffers.Allocated, int64(slots), r.Name)
	require.Equal(t, int64(2), r.Buffers.Allocated+r.Buffers.Reused, r.Name)
	require.Positive(t, r.Buffers.SetBytes, r.Name)
	seen := map[int]bool{}
	synthCPU := 0.0
	for _, p := range r.PartitionsDetail {
		require.True(t, p.Verified, "%s partition %d: %s", r.Name, p.Index, p.Error)
		require.Empty(t, p.Error)
		require.Equal(t, p.Index, p.Partition, "2 partitions of a 2-partition C1")
		seen[p.Index] = true
		for what, v := range map[string]float64{"synthesis": p.Synth, "synthesis CPU": p.SynthCPU, "prove": p.Prove,
			"compute": p.Compute, "device": p.DeviceS, "verify": p.Verify, "latency": p.Latency} {
			require.Positive(t, v, "%s partition %d: %s", r.Name, p.Index, what)
		}
		// On Linux the synthesis threads' own CPU time is read, so it is
		// exact even where two slots' syntheses overlapped.
		require.Equal(t, runtime.GOOS == "linux", p.SynthCPUThreads, "%s partition %d", r.Name, p.Index)
		synthCPU += p.SynthCPU
		require.GreaterOrEqual(t, p.LockWait, 0.0)
		require.InDelta(t, p.End-p.Start, p.Latency, 1e-6)
		require.LessOrEqual(t, p.End, r.Wall+1e-6)
	}
	require.Len(t, seen, 2, "each partition proved once")
	// the syntheses' own CPU time lies within the process's over the run
	require.LessOrEqual(t, synthCPU, r.CoreSeconds*float64(len(r.PartitionsDetail))+0.05, r.Name)
	if runtime.GOOS == "linux" {
		require.True(t, r.SynthCPUExact, "%s: measured on the synthesis threads", r.Name)
	}
	for what, v := range map[string]float64{"wall": r.Wall, "throughput": r.Throughput, "latency median": r.LatencyMedian,
		"latency max": r.LatencyMax, "synthesis": r.SynthMedian, "synthesis core-s": r.SynthCPUMedian,
		"device s": r.DeviceMedian, "compute": r.ComputeMedian, "core-s": r.CoreSeconds} {
		require.Positive(t, v, "%s: %s", r.Name, what)
	}
	require.InDelta(t, 2/r.Wall*60, r.Throughput, 1e-6)
	// steady: one interval between the two partitions' ends
	ends := []float64{r.PartitionsDetail[0].End, r.PartitionsDetail[1].End}
	require.InDelta(t, 60/math.Abs(ends[1]-ends[0]), r.SteadyThroughput, 1e-6, r.Name)
	require.Positive(t, max(r.Peaks.RSSHWM, r.Peaks.RSSSampled), "%s: host RSS peak", r.Name)
	require.Zero(t, r.VRAMTaskPeak, "the CPU backend reserves no device memory")
}

// The whole command on the CPU backend (what CI can run): a sparse
// BENCHMARK INPUT, parameters generated in memory and written; then a real
// sealed C1 with the parameters read back, swept over two modes × two slot
// counts; then a tampered C1, which fails and exits non-zero.
func TestBenchCPU(t *testing.T) {
	dir := t.TempDir()
	r, stdout, err := benchRun(t, "-shape", testShape, "-backend", "cpu", "-partitions", "2",
		"-params-dir", dir, "-write-params", "-setup-seed", "c2-bench test")
	require.NoError(t, err)
	require.Contains(t, stdout, "BENCHMARK INPUT")
	require.Contains(t, stdout, "parts/min")
	require.Equal(t, testShape, r.Shape)
	require.Equal(t, "sparse", r.Input.Kind)
	require.Contains(t, r.Input.Label, "BENCHMARK INPUT")
	require.Positive(t, r.Input.Bytes)
	require.Equal(t, micro(t).Constraints, r.Circuit.Constraints)
	require.Positive(t, r.Circuit.Peaks.Heap)
	require.Equal(t, "generated", r.Params.Source)
	require.Contains(t, r.Params.ToxicWaste, "TEST ONLY")
	require.Contains(t, r.Params.FixedBase, "CPU")
	require.Equal(t, "monomial", r.Params.HForm, "-h-form auto writes bellperson's layout")
	require.True(t, r.Params.Written)
	require.Positive(t, r.Params.Seconds)
	for _, p := range []string{circuit.ParamsPath(dir, testShape), circuit.VKPath(dir, testShape), circuit.FingerprintPath(dir, testShape)} {
		require.FileExists(t, p)
	}
	fi, err := os.Stat(circuit.ParamsPath(dir, testShape))
	require.NoError(t, err)
	require.Equal(t, fi.Size(), r.Params.Bytes)
	require.Equal(t, "cpu", r.Backend.Name)
	require.False(t, r.Backend.HostKeyReleased, "the CPU backend reads the host points")
	require.Equal(t, []string{"cpu0"}, r.Backend.Devices)
	require.Contains(t, r.Backend.VRAMNote, "no device memory")
	require.True(t, r.Verified)
	require.Equal(t, 2, r.Proofs)
	require.Zero(t, r.Failures)
	require.Len(t, r.Runs, 1)
	require.Equal(t, "compute", r.Runs[0].Interlock)
	require.Equal(t, 1, r.Runs[0].WorkersPerDevice, "the worker's default on the CPU backend")
	requireRun(t, r.Runs[0], 1)
	require.True(t, r.Runs[0].SynthCPUExact, "one slot: no synthesis overlaps another partition")

	// A real sealed C1, the parameters read back, a sweep.
	c1Path := filepath.Join(t.TempDir(), "sealed.json")
	doc := poreptest.SealedC1(t, testShape, 3)
	require.NoError(t, os.WriteFile(c1Path, doc, 0o644))
	r, stdout, err = benchRun(t, "-c1", c1Path, "-backend", "cpu", "-params-dir", dir, "-trusted-params",
		"-sweep", "-sweep-modes", "exclusive,compute", "-sweep-workers", "1,2", "-warmup")
	require.NoError(t, err)
	require.Equal(t, "file", r.Input.Kind)
	require.NotContains(t, stdout, "BENCHMARK INPUT")
	require.Equal(t, "read", r.Params.Source)
	require.Equal(t, "monomial", r.Params.HForm)
	require.False(t, r.Params.Written)
	require.True(t, r.Verified)
	// 4 runs of 2 partitions, each after a warm-up of one partition per
	// slot (1, 2, 1, 2), every proof verified and counted
	require.Equal(t, 8+6, r.Proofs)
	require.Len(t, r.Runs, 4)
	for i, want := range []struct {
		mode    string
		workers int
	}{{"exclusive", 1}, {"exclusive", 2}, {"compute", 1}, {"compute", 2}} {
		run := r.Runs[i]
		require.Equal(t, want.mode, run.Interlock)
		require.Equal(t, want.workers, run.WorkersPerDevice)
		requireRun(t, run, want.workers)
		require.Equal(t, want.workers, run.WarmupPartitions, "one warm-up partition per slot")
		// the warm-up filled the pool: the measured run allocates nothing
		require.Zero(t, run.Buffers.Allocated, "%s: buffer sets allocated after the warm-up", run.Name)
	}
	// Two slots under the exclusive lock: the second proof waited for the
	// first; no more than one device stage at a time.
	require.Positive(t, r.Runs[1].LockWaitMax)
	require.LessOrEqual(t, r.Runs[1].DeviceBusy, 1.0+1e-6)

	// A sweep cut at the end of its first run (a lent machine's deadline):
	// that run is still in the table and the JSON, the command fails and
	// names the run it could not finish.
	r, stdout, err = benchRunCut(t, "run 1/2: compute×1 done", "-c1", c1Path, "-backend", "cpu", "-params-dir", dir,
		"-trusted-params", "-sweep", "-sweep-modes", "compute", "-sweep-workers", "1,2")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "run 2/2 (compute×2)")
	require.Contains(t, stdout, "INTERRUPTED: run 2/2 (compute×2)")
	require.Contains(t, r.Interrupted, "run 2/2 (compute×2)")
	require.False(t, r.Verified, "an interrupted sweep is not a verified whole")
	require.Len(t, r.Runs, 1)
	requireRun(t, r.Runs[0], 1)
	require.Equal(t, 2, r.Proofs)

	// A tampered C1: its partition cannot be proved; the run says so and
	// the command fails.
	require.NoError(t, os.WriteFile(c1Path, poreptest.TamperPath(t, doc), 0o644))
	r, _, err = benchRun(t, "-c1", c1Path, "-backend", "cpu", "-params-dir", dir, "-trusted-params", "-gpu-workers", "2")
	require.ErrorIs(t, err, errVerification)
	require.False(t, r.Verified)
	require.Equal(t, 1, r.Proofs)
	require.Equal(t, 1, r.Failures)
	for _, p := range r.Runs[0].PartitionsDetail {
		require.Equal(t, p.Partition == 1, p.Error != "", "partition %d: %q", p.Partition, p.Error)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-shape", "1TiB"}, "-shape"},
		{[]string{"-interlock", "turbo"}, "-interlock"},
		{[]string{"-sweep-modes", "none,turbo"}, "-sweep-modes"},
		{[]string{"-sweep-workers", "0"}, "-sweep-workers"},
		{[]string{"-devices", "a"}, "-devices"},
		{[]string{"-write-params"}, "-write-params needs -params-dir"},
		{[]string{"-h-form", "lagrange"}, "unknown H form"},
		{[]string{"-shape", testShape, "-h-form", "coset-lagrange", "-write-params", "-params-dir", "x"}, "only a monomial H query"},
		{[]string{"-shape", "32GiB", "-write-params", "-params-dir", "x"}, "Filecoin's parameter files only"},
		{[]string{"-shape", testShape, "-h-form", "converted", "-write-params", "-params-dir", "x"}, "-h-form converted: -write-params writes bellperson's layout"},
		{[]string{"-h-form", "converted", "-params-dir", "x"}, "-params-dir reads them from files"},
		{[]string{"-same-proof=false"}, "-same-proof checks the conversion of -h-form converted"},
		{[]string{"-h-form", "monomial", "-same-proof"}, "-h-form is monomial"},
		{[]string{"-backend", "fpga"}, "-backend"},
		{[]string{"-partitions", "-1"}, "-partitions"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-mem-limit", "lots", "-shape", "nope"}, "-shape"},
		{[]string{"-mem-limit", "lots"}, "-mem-limit"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &stderr)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
		require.ErrorAs(t, err, new(usageError), "%v", tc.args)
	}
}

// micro is the stats of the test shape's circuit.
func micro(t *testing.T) circuit.Stats {
	t.Helper()
	s, err := porep.ShapeByName(testShape)
	require.NoError(t, err)
	c, err := circuit.ForShape(s)
	require.NoError(t, err)
	return c.Stats()
}
