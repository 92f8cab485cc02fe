package sealer

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/verifier"
)

// BenchmarkSealC1 seals random data and writes C1 for each shape. 8 MiB runs
// only without -short (seconds per iteration on 2 cores). With -v each
// iteration logs its progress lines (stage timings).
//
//	go test -run XXX -bench BenchmarkSealC1 -benchtime 3x ./pkg/porep/sealer/
func BenchmarkSealC1(b *testing.B) {
	for _, name := range []string{"test-mini", "test-tiny", "2KiB", "test-sub", "test-top", "test-11layers", "8MiB"} {
		b.Run(name, func(b *testing.B) {
			if name == "8MiB" && testing.Short() {
				b.Skip("8 MiB is skipped in -short mode")
			}
			var n int64
			var progress io.Writer
			if testing.Verbose() {
				progress = benchLog{b}
			}
			for b.Loop() {
				res, err := WriteRandomC1(context.Background(), RandomC1Config{Shape: name, Seed: 1, Progress: progress}, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				n = res.Bytes
			}
			b.ReportMetric(float64(n), "c1-bytes")
		})
	}
}

// benchLog forwards progress lines to the benchmark log (-v).
type benchLog struct{ b *testing.B }

func (l benchLog) Write(p []byte) (int, error) {
	l.b.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// BenchmarkParseVerify times c1.Parse, verifier.CheckStructure and
// verifier.Verify on one shape's C1.
func BenchmarkParseVerify(b *testing.B) {
	for _, name := range []string{"2KiB", "test-top"} {
		var buf bytes.Buffer
		if _, err := WriteRandomC1(context.Background(), RandomC1Config{Shape: name, Seed: 1}, &buf); err != nil {
			b.Fatal(err)
		}
		doc := buf.Bytes()
		b.Run(name+"/parse", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := c1.ParseBytes(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		out, err := c1.ParseBytes(doc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/structure", func(b *testing.B) {
			for b.Loop() {
				if err := verifier.CheckStructure(out, verifier.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/verify", func(b *testing.B) {
			for b.Loop() {
				if err := verifier.Verify(context.Background(), out, verifier.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSparseC1 times the sparse benchmark-input mode on the large
// shapes: WriteSparseC1 (sparse seal + vanilla proofs + JSON), c1.Parse and
// the full verifier.Verify of its output. live-MB is the Go heap in use after
// parsing, with the C1 document and its parsed form alive. With -v each
// write logs its progress lines (stage timings).
//
//	go test -run XXX -bench BenchmarkSparseC1 -benchtime 3x -benchmem ./pkg/porep/sealer/
func BenchmarkSparseC1(b *testing.B) {
	for _, name := range []string{"32GiB", "64GiB"} {
		var buf bytes.Buffer
		b.Run(name+"/write", func(b *testing.B) {
			var progress io.Writer
			if testing.Verbose() {
				progress = benchLog{b}
			}
			for b.Loop() {
				buf.Reset()
				if _, err := WriteSparseC1(context.Background(), SparseC1Config{Shape: name, Seed: 1, Progress: progress}, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "c1-bytes")
		})
		doc := buf.Bytes()
		var out *c1.Output
		b.Run(name+"/parse", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				var err error
				if out, err = c1.ParseBytes(doc); err != nil {
					b.Fatal(err)
				}
			}
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MB")
		})
		b.Run(name+"/verify", func(b *testing.B) {
			for b.Loop() {
				if err := verifier.Verify(context.Background(), out, verifier.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
