package circuit

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var reportShapes = flag.String("circuit.report", "", "comma-separated shapes for TestConstraintReport (e.g. test-micro,test-mini,2KiB)")

// TestConstraintReport prints, in markdown, the sizes of the compiled
// circuit of each shape named by -circuit.report with its compile and
// synthesis times and peak heap, then the 32 GiB extrapolation next to
// bellperson's count. It is what docs/perf/circuit.md records:
//
//	go test -run TestConstraintReport -v ./pkg/porep/circuit/ -circuit.report=test-micro,test-mini,test-tiny,2KiB
func TestConstraintReport(t *testing.T) {
	if *reportShapes == "" {
		t.Skip("set -circuit.report=shape,... to print the constraint report")
	}
	w := os.Stdout
	fmt.Fprintf(w, "\nGOMAXPROCS %d, %s/%s\n\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintln(w, "| shape | constraints | inputs | aux | domain | A / B density (aux) | commitments | compile | compile peak heap | compiled circuit heap | synthesize (median) | synthesis peak heap | synthesized size |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, name := range strings.Split(*reportShapes, ",") {
		out := parseC1(t, sealedC1(t, name, 1))
		p, err := ParamsOf(out.Shape)
		require.NoError(t, err)
		var c *Compiled
		base := heapInUse()
		compilePeak := peakHeap(func() { c, err = Compile(p) })
		require.NoError(t, err)
		resident := heapInUse() - base // the compiled circuit, kept by c
		st := c.Stats()
		require.Zero(t, st.Commitments)
		var times []time.Duration
		var synthPeak, size uint64
		for k := range out.Shape.Partitions {
			start := time.Now()
			var sz uint64
			peak := peakHeap(func() {
				s, err := c.Synthesize(context.Background(), out, k)
				require.NoError(t, err)
				sz = 32 * uint64(len(s.A)+len(s.B)+len(s.C)+len(s.Input)+len(s.Aux))
			})
			times = append(times, time.Since(start))
			synthPeak, size = max(synthPeak, peak), sz
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		fmt.Fprintf(w, "| %s | %d | %d | %d | 2^%d | %.1f %% / %.1f %% | %d | %v | %s | %s | %v | %s | %s |\n",
			name, st.Constraints, st.Inputs, st.Aux, log2(st.Domain), 100*st.ADensityAux, 100*st.BDensityAux, st.Commitments,
			c.CompileTime().Round(time.Millisecond), mib(compilePeak), mib(resident), times[len(times)/2].Round(time.Millisecond), mib(synthPeak), mib(size))
		runtime.KeepAlive(c)
	}

	ours, err := CountBreakdown(Official32GiB())
	require.NoError(t, err)
	bp, err := BellpersonBreakdown(Official32GiB())
	require.NoError(t, err)
	inputs := Official32GiB().NumPublic() + 1
	fmt.Fprintf(w, "\n32 GiB partition (extrapolated from per-gadget counts), %d inputs:\n\n", inputs)
	fmt.Fprintln(w, "| gadget | constraints per use | uses | total |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, r := range ours.Grouped() {
		fmt.Fprintf(w, "| %s | %d | %d | %d |\n", r.Name, r.Constraints, r.Uses, r.Total())
	}
	fmt.Fprintf(w, "| **total** (+ %d input constraints = %d) | | | **%d** |\n", inputs, ours.Total()+inputs, ours.Total())
	fmt.Fprintln(w, "\nbellperson (rust-fil-proofs StackedCircuit):")
	fmt.Fprintln(w, "\n| gadget | constraints per use | uses | total |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, r := range bp.Rows {
		fmt.Fprintf(w, "| %s | %d | %d | %d |\n", r.Name, r.Constraints, r.Uses, r.Total())
	}
	fmt.Fprintf(w, "| **total** (+ %d input constraints = %d) | | | **%d** |\n", inputs, bp.Total()+inputs, bp.Total())
	fmt.Fprintln(w, "\n| part | c2cluster | bellperson | difference |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	o, b := ours.PartTotals(), bp.PartTotals()
	for i, part := range Parts {
		fmt.Fprintf(w, "| %s | %d | %d | %+d |\n", part, o[i], b[i], o[i]-b[i])
	}
	fmt.Fprintf(w, "| **total** | %d | %d | %+d (%+.3f %%) |\n", ours.Total(), bp.Total(), ours.Total()-bp.Total(),
		100*float64(ours.Total()-bp.Total())/float64(bp.Total()))
}

var (
	compileShapes       = flag.String("circuit.compile", "", "comma-separated shapes for TestCompileReport; shape*N gives it N challenges per partition (e.g. test-mini*18,32GiB)")
	compileAlsoFrontend = flag.Bool("circuit.frontend", false, "TestCompileReport also compiles each shape with gnark's frontend on the whole circuit (the old way)")
)

// TestCompileReport prints, in markdown, the compile time and heap of each
// shape named by -circuit.compile (no sealing, no synthesis, so official
// shapes such as 32GiB can be compiled where memory allows), assembled from
// templates and, with -circuit.frontend, compiled whole by gnark's frontend:
//
//	go test -run TestCompileReport -v -timeout 60m ./pkg/porep/circuit/ -circuit.compile=test-tiny,test-mini*18 -circuit.frontend
func TestCompileReport(t *testing.T) {
	if *compileShapes == "" {
		t.Skip("set -circuit.compile=shape,... to print the compile report")
	}
	w := os.Stdout
	fmt.Fprintf(w, "\nGOMAXPROCS %d, %s/%s\n\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintln(w, "| shape | challenges | constraints | compiled by | compile | compile peak heap | compiled circuit heap | peak / constraint | kept / constraint |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, name := range strings.Split(*compileShapes, ",") {
		shape, n, _ := strings.Cut(name, "*")
		p := mustParams(t, shape)
		if n != "" {
			c, err := strconv.Atoi(n)
			require.NoError(t, err)
			p.Challenges = c
			p.Name = name
		}
		ways := []struct {
			name string
			opts []Option
		}{{"templates", nil}}
		if *compileAlsoFrontend {
			ways = append(ways, struct {
				name string
				opts []Option
			}{"frontend (whole circuit)", []Option{withFrontend()}})
		}
		for _, way := range ways {
			var c *Compiled
			var err error
			base := heapInUse()
			peak := peakHeap(func() { c, err = Compile(p, way.opts...) })
			require.NoError(t, err)
			kept := heapInUse() - base
			n := uint64(c.Stats().Constraints)
			fmt.Fprintf(w, "| %s | %d | %d | %s | %v | %s | %s | %d B | %d B |\n", name, p.Challenges, n, way.name,
				c.CompileTime().Round(time.Millisecond), mib(peak), mib(kept), peak/n, kept/n)
			runtime.KeepAlive(c)
			c = nil
		}
	}
}

// peakHeap runs f while sampling the heap every millisecond and returns
// the peak above the heap in use before it (after a GC). The heap is what
// runtime.MemStats calls HeapAlloc (live and not yet swept objects), read
// through runtime/metrics, which does not stop the world:
// runtime.ReadMemStats every millisecond preempts f each time and made
// compiles ~35 % slower than they are.
func peakHeap(f func()) uint64 {
	base := heapInUse()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// heapInUse is the live heap after a GC.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}
