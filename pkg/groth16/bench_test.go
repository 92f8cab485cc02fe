package groth16

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	gnarkgroth16 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

// benchChain returns the chain length whose circuit has constraints +
// inputs just under 2^logN, so that our domain (constraints + inputs) and
// gnark's (constraints) are both 2^logN.
func benchChain(logN int) int {
	// The chain adds one constraint per step; the 64-bit decomposition, the
	// final checks and the inputs add about 70 rows.
	return 1<<logN - 128
}

type benchCase struct {
	logN    int
	circuit *Circuit
	pk      *ProvingKey
	gpk     *gnarkgroth16.ProvingKey
	full    witness.Witness
}

var benchCases = map[int]*benchCase{}

// benchCacheDir keeps the (slow to generate) keys of the benchmark circuits
// between runs; delete it to regenerate.
func benchCacheDir() string { return filepath.Join(os.TempDir(), "c2cluster-groth16-bench") }

func getBenchCase(b *testing.B, logN int) *benchCase {
	if c, ok := benchCases[logN]; ok {
		return c
	}
	n := benchChain(logN)
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &groth16test.Chain{N: n})
	require.NoError(b, err)
	circuit, err := NewCircuit(ccs)
	require.NoError(b, err)
	require.Equal(b, 1<<logN, circuit.DomainSize())
	require.Equal(b, uint64(1<<logN), ecc.NextPowerOfTwo(uint64(ccs.GetNbConstraints())))
	c := &benchCase{logN: logN, circuit: circuit}

	dir := benchCacheDir()
	require.NoError(b, os.MkdirAll(dir, 0o755))
	ours := filepath.Join(dir, fmt.Sprintf("chain-2^%d.params", logN))
	if pk, err := ReadParams(ours, SkipSubgroupCheck()); err == nil && len(pk.H) == 1<<logN-1 {
		c.pk = pk
	} else {
		b.Logf("setup (ours) 2^%d ...", logN)
		c.pk, err = Setup(context.Background(), circuit, SetupSeed([]byte("bench")))
		require.NoError(b, err)
		fh, err := os.Create(ours)
		require.NoError(b, err)
		require.NoError(b, WriteParams(fh, c.pk))
		require.NoError(b, fh.Close())
	}
	theirs := filepath.Join(dir, fmt.Sprintf("chain-2^%d.gnark-pk", logN))
	c.gpk = &gnarkgroth16.ProvingKey{}
	if fh, err := os.Open(theirs); err == nil {
		_, err = c.gpk.UnsafeReadFrom(fh)
		fh.Close()
		require.NoError(b, err)
	} else {
		b.Logf("setup (gnark) 2^%d ...", logN)
		var gvk gnarkgroth16.VerifyingKey
		require.NoError(b, gnarkgroth16.Setup(ccs.(*cs.R1CS), c.gpk, &gvk))
		fh, err := os.Create(theirs)
		require.NoError(b, err)
		_, err = c.gpk.WriteRawTo(fh)
		require.NoError(b, err)
		require.NoError(b, fh.Close())
	}
	full, _ := chainWitness(b, n, 3, 0xfeedface12345678, 9)
	c.full = full
	benchCases[logN] = c
	return c
}

// BenchmarkProve compares, on the same circuit and in the same run, our
// CPU backend (solve + prove, like gnark's Prove which solves internally)
// with gnark's groth16.Prove; "ours-prove" is the prover alone on a solved
// instance.
func BenchmarkProve(b *testing.B) {
	for _, logN := range []int{14, 16, 18} {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			c := getBenchCase(b, logN)
			key, err := NewCPUBackend().Load(context.Background(), c.pk)
			require.NoError(b, err)
			rnd, err := NewRandomness()
			require.NoError(b, err)
			b.Run("ours", func(b *testing.B) {
				for b.Loop() {
					w, err := c.circuit.Solve(c.full)
					require.NoError(b, err)
					_, _, err = Prove(context.Background(), key, w, rnd)
					require.NoError(b, err)
				}
			})
			b.Run("gnark", func(b *testing.B) {
				for b.Loop() {
					_, err := gnarkgroth16.Prove(c.circuit.R1CS(), c.gpk, c.full)
					require.NoError(b, err)
				}
			})
			b.Run("ours-prove", func(b *testing.B) {
				w, err := c.circuit.Solve(c.full)
				require.NoError(b, err)
				var tm Timings
				for b.Loop() {
					_, tm, err = Prove(context.Background(), key, w, rnd)
					require.NoError(b, err)
				}
				b.ReportMetric(float64(tm.H.Milliseconds()), "H-ms")
				b.ReportMetric(float64(tm.MSMBG2.Milliseconds()), "msmG2-ms")
			})
		})
	}
}

// BenchmarkSetup times our setup (fresh toxic waste) at 2^16 and 2^18, next
// to gnark's groth16.Setup on the same circuit.
func BenchmarkSetup(b *testing.B) {
	for _, logN := range []int{16, 18} {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &groth16test.Chain{N: benchChain(logN)})
			require.NoError(b, err)
			circuit, err := NewCircuit(ccs)
			require.NoError(b, err)
			b.Run("ours", func(b *testing.B) {
				for b.Loop() {
					_, err := Setup(context.Background(), circuit)
					require.NoError(b, err)
				}
			})
			b.Run("gnark", func(b *testing.B) {
				for b.Loop() {
					var pk gnarkgroth16.ProvingKey
					var vk gnarkgroth16.VerifyingKey
					require.NoError(b, gnarkgroth16.Setup(ccs.(*cs.R1CS), &pk, &vk))
				}
			})
		})
	}
}

// BenchmarkDecodePoint is the cost of reading one parameter point, per
// point on one core: the checks every point gets (flags, coordinates < p,
// the curve equation) with and without the subgroup check that
// SkipSubgroupCheck / trusted_params leave out. A 32 GiB-shape .params
// holds ~400 M G1 and ~33 M G2 points; ReadParams spreads them over all
// cores.
//
//	go test -run '^$' -bench BenchmarkDecodePoint -benchtime 2000x ./pkg/groth16/
func BenchmarkDecodePoint(b *testing.B) {
	_, _, g1, g2 := curve.Generators()
	var s fr.Element
	s.SetUint64(123456789)
	var p1 curve.G1Affine
	var p2 curve.G2Affine
	p1.ScalarMultiplication(&g1, s.BigInt(new(big.Int)))
	p2.ScalarMultiplication(&g2, s.BigInt(new(big.Int)))
	b1, b2 := p1.RawBytes(), p2.RawBytes()
	for _, subgroup := range []bool{false, true} {
		b.Run(fmt.Sprintf("G1/subgroup=%v", subgroup), func(b *testing.B) {
			var q curve.G1Affine
			for b.Loop() {
				if err := decodeG1Uncompressed(&q, b1[:], subgroup); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("G2/subgroup=%v", subgroup), func(b *testing.B) {
			var q curve.G2Affine
			for b.Loop() {
				if err := decodeG2Uncompressed(&q, b2[:], subgroup); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
