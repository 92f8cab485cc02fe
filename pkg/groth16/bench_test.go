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
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// benchChain returns the chain length whose circuit has constraints +
// inputs just under 2^logN, so that our domain (constraints + inputs) and
// gnark's (constraints) are both 2^logN.
func benchChain(logN int) int {
	// The chain adds one constraint per step; the 64-bit decomposition, the
	// product Q·W and the inputs add 71 rows (groth16test.ChainConstraints).
	return 1<<logN - 128
}

// gnarkR1CS is sys as a gnark constraint system, built with gnark's
// constraint package (no frontend): ONE and the inputs are its public
// wires and every aux variable a secret one, so gnark's solver has nothing
// to solve but checks every constraint, and the constraints are the
// System's, term for term. gnark's Setup and Prove run on it next to ours.
func gnarkR1CS(sys *r1cs.System) *cs.R1CS {
	r := cs.NewR1CS(sys.NumConstraints())
	bp := r.AddBlueprint(&constraint.BlueprintGenericR1C{})
	r.AddPublicVariable("1")
	for i := 1; i < sys.NumInputs(); i++ {
		r.AddPublicVariable(fmt.Sprintf("input%d", i))
	}
	for i := range sys.NumAux() {
		r.AddSecretVariable(fmt.Sprintf("aux%d", i))
	}
	coeffs := sys.Coeffs()
	u64 := make([]constraint.U64, len(coeffs))
	for k := range coeffs {
		u64[k] = r.FromInterface(coeffs[k])
	}
	wire := func(v r1cs.Variable) int {
		if v.IsInput() {
			return v.Index()
		}
		return sys.NumInputs() + v.Index()
	}
	lin := func(ts []r1cs.STerm) constraint.LinearExpression {
		le := make(constraint.LinearExpression, 0, len(ts))
		for _, x := range ts {
			le = append(le, r.MakeTerm(u64[x.K], wire(x.V)))
		}
		return le
	}
	for j := range sys.NumConstraints() {
		ra, rb, rc := sys.Row(j)
		r.AddR1C(constraint.R1C{L: lin(ra), R: lin(rb), O: lin(rc)}, bp)
	}
	return r
}

// gnarkWitness is sys's values as a full gnark witness of gnarkR1CS(sys):
// the inputs without ONE, then the aux variables.
func gnarkWitness(tb testing.TB, sys *r1cs.System) witness.Witness {
	tb.Helper()
	inputs, aux := sys.Values()
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	require.NoError(tb, err)
	ch := make(chan any)
	go func() {
		defer close(ch)
		for _, v := range inputs[1:] {
			ch <- v
		}
		for _, v := range aux {
			ch <- v
		}
	}()
	require.NoError(tb, w.Fill(len(inputs)-1, len(aux), ch))
	return w
}

// gnarkR1CS and gnarkWitness carry the System over: gnark's solver
// accepts the chain's values and refuses a corrupt chain's, on as many
// constraints and wires.
func TestGnarkR1CSIsTheSystem(t *testing.T) {
	sys := groth16test.ChainSystem(10, 3, 5, 7)
	gcs := gnarkR1CS(sys)
	require.Equal(t, sys.NumConstraints(), gcs.GetNbConstraints())
	require.Equal(t, sys.NumInputs(), gcs.GetNbPublicVariables())
	require.Equal(t, sys.NumAux(), gcs.GetNbSecretVariables())
	require.Zero(t, gcs.GetNbInternalVariables())
	require.NoError(t, gcs.IsSolved(gnarkWitness(t, sys)))
	bad := groth16test.Chain{N: 10, X: 3, W: 5, Q: 7, Corrupt: true}.System()
	require.Error(t, gcs.IsSolved(gnarkWitness(t, bad)))
}

type benchCase struct {
	logN int
	sys  *r1cs.System // with values
	pk   *ProvingKey
	gcs  *cs.R1CS
	gpk  *gnarkgroth16.ProvingKey
	full witness.Witness // sys's values for gnark
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
	sys := groth16test.ChainSystem(n, 3, 0xfeedface12345678, 9)
	circuit, err := CircuitOf(context.Background(), sys)
	require.NoError(b, err)
	require.Equal(b, 1<<logN, circuit.DomainSize())
	gcs := gnarkR1CS(sys)
	require.Equal(b, uint64(1<<logN), ecc.NextPowerOfTwo(uint64(gcs.GetNbConstraints())))
	c := &benchCase{logN: logN, sys: sys, gcs: gcs}

	dir := benchCacheDir()
	require.NoError(b, os.MkdirAll(dir, 0o755))
	// (r1cs-chain: the pkg/r1cs chain's keys; the files of the former gnark
	// chain, chain-2^k.*, have other counts.)
	ours := filepath.Join(dir, fmt.Sprintf("r1cs-chain-2^%d.params", logN))
	if pk, err := ReadParams(ours, SkipSubgroupCheck()); err == nil && len(pk.H) == 1<<logN-1 &&
		len(pk.VK.IC) == sys.NumInputs() && len(pk.L) == sys.NumAux() {
		c.pk = pk
	} else {
		b.Logf("setup (ours) 2^%d ...", logN)
		c.pk, _, err = SetupR1CS(context.Background(), sys, SetupSeed([]byte("bench")))
		require.NoError(b, err)
		require.NoError(b, WriteParamsFile(ours, c.pk))
	}
	theirs := filepath.Join(dir, fmt.Sprintf("r1cs-chain-2^%d.gnark-pk", logN))
	c.gpk = &gnarkgroth16.ProvingKey{}
	if fh, err := os.Open(theirs); err == nil {
		_, err = c.gpk.UnsafeReadFrom(fh)
		fh.Close()
		require.NoError(b, err)
	} else {
		b.Logf("setup (gnark) 2^%d ...", logN)
		var gvk gnarkgroth16.VerifyingKey
		require.NoError(b, gnarkgroth16.Setup(gcs, c.gpk, &gvk))
		fh, err := os.Create(theirs)
		require.NoError(b, err)
		_, err = c.gpk.WriteRawTo(fh)
		require.NoError(b, err)
		require.NoError(b, fh.Close())
	}
	c.full = gnarkWitness(b, sys)
	benchCases[logN] = c
	return c
}

// BenchmarkProve compares, on the same circuit and in the same run, our
// CPU backend (SynthesizeSystem + prove, like gnark's Prove which runs its
// solver first: here it has only constraints to check) with gnark's
// groth16.Prove on the same constraints (gnarkR1CS); "ours-prove" is the
// prover alone on a synthesized instance.
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
					w, err := SynthesizeSystem(c.sys)
					require.NoError(b, err)
					_, _, err = Prove(context.Background(), key, w, rnd)
					require.NoError(b, err)
				}
			})
			b.Run("gnark", func(b *testing.B) {
				for b.Loop() {
					_, err := gnarkgroth16.Prove(c.gcs, c.gpk, c.full)
					require.NoError(b, err)
				}
			})
			b.Run("ours-prove", func(b *testing.B) {
				w, err := SynthesizeSystem(c.sys)
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
// to gnark's groth16.Setup on the same constraints.
func BenchmarkSetup(b *testing.B) {
	for _, logN := range []int{16, 18} {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			sys := groth16test.ChainSystem(benchChain(logN), 3, 5, 7)
			gcs := gnarkR1CS(sys)
			b.Run("ours", func(b *testing.B) {
				for b.Loop() {
					_, _, err := SetupR1CS(context.Background(), sys)
					require.NoError(b, err)
				}
			})
			b.Run("gnark", func(b *testing.B) {
				for b.Loop() {
					var pk gnarkgroth16.ProvingKey
					var vk gnarkgroth16.VerifyingKey
					require.NoError(b, gnarkgroth16.Setup(gcs, &pk, &vk))
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
