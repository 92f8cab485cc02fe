package circuit

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/cputime"
	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// BenchmarkSynthesize measures the worker's CPU step for one partition:
// witness from the parsed C1 and the solve (compilation is cached and not
// timed), per template use (templates, what Synthesize does; pooled, the
// same into one reused buffer set, as the worker does) and with gnark's
// solver on the whole system (whole, the way it was done before).
// Reports constraints per second and the process's CPU seconds per
// partition (user + system, GC included).
//
//	go test -run '^$' -bench BenchmarkSynthesize -benchtime 5x -cpu 1,2 ./pkg/porep/circuit/
func BenchmarkSynthesize(b *testing.B) {
	for _, name := range []string{"test-micro", "test-mini", "test-tiny", "2KiB"} {
		for _, how := range []string{"templates", "pooled", "whole"} {
			b.Run(name+"/"+how, func(b *testing.B) {
				out := parseC1(b, sealedC1(b, name, 1))
				c, err := ForShape(out.Shape)
				require.NoError(b, err)
				var opts []Option
				switch how {
				case "whole":
					opts = append(opts, withWholeSolve())
				case "pooled": // as the worker: into one reused buffer set
					pool := c.NewBufferPool(1)
					defer pool.Close()
					opts = append(opts, WithBuffers(pool))
				}
				ctx := context.Background()
				runtime.GC()
				cpu0 := cputime.Process()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s, err := c.Synthesize(ctx, out, i%out.Shape.Partitions, opts...)
					require.NoError(b, err)
					s.Release()
				}
				b.StopTimer()
				b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(c.Stats().Constraints)*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
			})
		}
	}
}

// BenchmarkProve2KiB is the official 2 KiB shape end to end, too slow for CI
// on two cores: setup (not timed, deterministic seed, written to files and
// read back), then per iteration synthesize + prove on the CPU backend +
// verify against the native public inputs.
//
//	go test -run '^$' -bench BenchmarkProve2KiB -benchtime 1x -timeout 60m ./pkg/porep/circuit/
func BenchmarkProve2KiB(b *testing.B) {
	ctx := context.Background()
	out := parseC1(b, sealedC1(b, "2KiB", 1))
	dir := b.TempDir()
	cfg := SetupConfig{ParamsPath: filepath.Join(dir, "2KiB.params"), VKPath: filepath.Join(dir, "2KiB.vk"), Seed: []byte("bench")}
	if testing.Verbose() {
		cfg.Progress = groth16.ProgressLines(benchLog{b})
	}
	pk, err := Setup(ctx, out.Shape, cfg)
	require.NoError(b, err)
	key, err := groth16.NewCPUBackend().Load(ctx, pk)
	require.NoError(b, err)
	defer key.Close()
	c, err := ForShape(out.Shape)
	require.NoError(b, err)
	in, err := PublicInputs(out, 0)
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := c.Synthesize(ctx, out, 0)
		require.NoError(b, err)
		rnd, err := groth16.NewRandomness()
		require.NoError(b, err)
		proof, tm, err := groth16.Prove(ctx, key, w, rnd)
		require.NoError(b, err)
		require.NoError(b, groth16.Verify(&pk.VK, proof, in))
		b.Logf("prove: %+v", tm)
	}
}

type benchLog struct{ b *testing.B }

func (l benchLog) Write(p []byte) (int, error) {
	l.b.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
