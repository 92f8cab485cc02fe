package main

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
)

// timedConvert around the library's conversion, on a chain circuit whose
// domain (256) the CPU DFT transforms in about a second: the key is the
// library's, every stage is timed, the two DFT calls lie within the DFT
// stage and the stages within the whole.
func TestTimedConvert(t *testing.T) {
	ctx := context.Background()
	sys := groth16test.ChainSystem(100, 3, 0xdeadbeefcafe, 7)
	pk, _, err := groth16.SetupR1CS(ctx, sys, groth16.SetupSeed([]byte("c2-bench convert")))
	require.NoError(t, err)
	require.Equal(t, groth16.HMonomial, pk.HForm)
	var reported []string
	conv, c, err := timedConvert(ctx, pk, sys, groth16.CPUDFTG1, func(stage string, done, total int64) {
		if done == 0 {
			reported = append(reported, stage)
		}
	})
	require.NoError(t, err)
	want, err := groth16.ConvertHCosetLagrange(ctx, pk, sys, groth16.CPUDFTG1, nil)
	require.NoError(t, err)
	require.Equal(t, want, conv, "the library's conversion, unchanged")

	stages := []string{"dft", "c matrix", "fold"}
	require.Equal(t, stages, c.StageOrder)
	for _, s := range stages {
		require.Contains(t, reported, convertStagePrefix+s, "progress passed on")
		require.Contains(t, c.Stages, s)
		require.GreaterOrEqual(t, c.Stages[s], 0.0, s)
		require.Equal(t, c.Progress[s].Total, c.Progress[s].Done, s)
		require.Positive(t, c.Progress[s].Total, s)
		require.Equal(t, c.Stages[s], c.Progress[s].Seconds, s)
	}
	require.Len(t, c.DFTSeconds, 2, "H' and M")
	require.Equal(t, len(pk.H)+1, c.DFTPoints, "the domain")
	sumDFT, sumStages := 0.0, 0.0
	for _, d := range c.DFTSeconds {
		require.Positive(t, d)
		sumDFT += d
	}
	for _, v := range c.Stages {
		sumStages += v
	}
	require.LessOrEqual(t, sumDFT, c.Stages["dft"])
	require.LessOrEqual(t, sumStages, c.Seconds)
	require.Contains(t, c.stageLine(), "DFTs of 256 points")

	// A DFT that fails: the error comes back and the stage is unfinished.
	boom := errors.New("device lost")
	_, c, err = timedConvert(ctx, pk, sys, func(context.Context, []curve.G1Affine, bool, *groth16.DFTScale) error { return boom }, nil)
	require.ErrorIs(t, err, boom)
	require.Equal(t, []string{"dft"}, c.StageOrder)
	require.NotContains(t, c.Stages, "dft")
	require.Equal(t, StageProgress{Done: 0, Total: 2, Seconds: 0}, c.Progress["dft"], "the stage's start, nothing since")
	require.Contains(t, c.stageLine(), "dft unfinished (0/2 in 0.0s)")
}

// setupSeed is the end-to-end tests' -setup-seed.
const setupSeed = "c2-bench converted test"

// seedKey is test-micro's key from setupSeed in coset-Lagrange form, made
// once for the tests that need it.
var seedKey struct {
	once sync.Once
	pk   *groth16.ProvingKey
	err  error
}

// cosetLagrangeFromSeed stands in for the conversion in the end-to-end
// tests, where the CPU DFT of test-micro's 2^18 points would take most of
// an hour (TestTimedConvert runs the library's conversion; its proofs are
// checked in pkg/groth16). It checks what c2-bench hands the conversion —
// the generated monomial key of the circuit, the circuit's constraint
// system, a DFT that transforms as groth16.CPUDFTG1 does (the CPU
// backend's selection) — and returns the key set up from the same toxic
// waste in coset-Lagrange form, which proves the monomial key's proofs
// byte for byte (pkg/groth16 TestCosetLagrangeKeyProvesTheSameProofs);
// tamper, when not nil, changes a copy of that key (replacing the slices
// it changes) before it is returned.
func cosetLagrangeFromSeed(t *testing.T, tamper func(*groth16.ProvingKey)) {
	t.Helper()
	s, err := porep.ShapeByName(testShape)
	require.NoError(t, err)
	compiled, err := circuit.ForShape(s)
	require.NoError(t, err)
	calls := 0
	convertH = func(ctx context.Context, pk *groth16.ProvingKey, sys groth16.R1CS, dft groth16.G1DFT, progress groth16.Progress) (*groth16.ProvingKey, error) {
		calls++
		st := compiled.Stats()
		switch {
		case pk.HForm != groth16.HMonomial:
			return nil, fmt.Errorf("key in %v form, want monomial", pk.HForm)
		case len(pk.H) != st.Domain-1 || len(pk.L) != st.Aux:
			return nil, fmt.Errorf("key of %d H and %d L points, the circuit needs %d and %d", len(pk.H), len(pk.L), st.Domain-1, st.Aux)
		case sys.NumConstraints() != st.Constraints || sys.NumInputs() != st.Inputs || sys.NumAux() != st.Aux:
			return nil, fmt.Errorf("system of %d constraints, %d inputs, %d aux: not the circuit's", sys.NumConstraints(), sys.NumInputs(), sys.NumAux())
		case progress == nil:
			return nil, errors.New("no progress")
		}
		_, _, g, _ := curve.Generators()
		pts := make([]curve.G1Affine, 8)
		for i := range pts {
			pts[i].ScalarMultiplication(&g, big.NewInt(int64(3*i+1)))
		}
		want := slices.Clone(pts)
		var sc groth16.DFTScale
		sc.C.SetUint64(5)
		sc.X.SetUint64(3)
		if err := groth16.CPUDFTG1(ctx, want, true, &sc); err != nil {
			return nil, err
		}
		if err := dft(ctx, pts, true, &sc); err != nil {
			return nil, err
		}
		if !slices.Equal(want, pts) {
			return nil, errors.New("the DFT handed over does not transform as CPUDFTG1")
		}
		seedKey.once.Do(func() {
			seedKey.pk, seedKey.err = compiled.Keys(ctx, groth16.SetupSeed([]byte(setupSeed)), groth16.SetupHForm(groth16.HCosetLagrange))
		})
		if seedKey.err != nil {
			return nil, seedKey.err
		}
		conv := *seedKey.pk // tamper replaces what it changes
		if tamper != nil {
			tamper(&conv)
		}
		return &conv, nil
	}
	t.Cleanup(func() {
		convertH = groth16.ConvertHCosetLagrange
		require.Equal(t, 1, calls, "one conversion per command")
	})
}

// -h-form converted on the CPU backend: generated monomial, converted,
// partition 0 proved with both keys to the same bytes, then every
// partition proved and verified with the converted key; the conversion
// and the check in the JSON and the table.
func TestBenchConverted(t *testing.T) {
	cosetLagrangeFromSeed(t, nil)
	r, stdout, err := benchRun(t, "-shape", testShape, "-backend", "cpu", "-partitions", "2",
		"-h-form", "converted", "-setup-seed", setupSeed)
	require.NoError(t, err)
	require.Equal(t, "generated", r.Params.Source)
	require.Equal(t, "coset-lagrange", r.Params.HForm, "proved with the converted key")
	c := r.Params.Convert
	require.NotNil(t, c)
	require.Positive(t, r.Params.ConvertSeconds)
	require.Equal(t, c.Seconds, r.Params.ConvertSeconds)
	require.Contains(t, c.DFT, "on the CPU", "the CPU backend's selection")
	require.Len(t, c.DFTSeconds, 1, "the stand-in's one DFT call, timed")
	require.Equal(t, 8, c.DFTPoints)
	st := micro(t)
	require.Equal(t, int64(st.Domain-1+st.Aux)*96, c.FreedBytes, "the monomial H and L")
	require.Positive(t, c.HeapAfter)
	require.Positive(t, max(c.Peaks.RSSHWM, c.Peaks.RSSSampled))

	sp := c.SameProof
	require.NotNil(t, sp)
	require.Zero(t, sp.Partition)
	require.Contains(t, sp.Backend, "cpu device 0")
	require.True(t, sp.Identical)
	require.True(t, sp.Verified)
	require.Equal(t, sp.Monomial, sp.Converted)
	require.Len(t, sp.Converted, 2*groth16.ProofSize)
	for what, v := range map[string]float64{"monomial prove": sp.MonomialProve, "converted prove": sp.ConvertedProve, "check": sp.Seconds} {
		require.Positive(t, v, what)
	}
	require.Contains(t, stdout, "converted to coset-Lagrange in")
	require.Contains(t, stdout, "same proof of partition 0")
	require.Contains(t, stdout, "identical, verified")

	require.True(t, r.Verified)
	require.Equal(t, 2, r.Proofs)
	require.Len(t, r.Runs, 1)
	requireRun(t, r.Runs[0], 1)
}

// A conversion whose key proves other bytes (one H point moved) stops the
// command before any run: exit status non-zero, both proofs in the JSON.
func TestBenchConvertedDifferentProof(t *testing.T) {
	cosetLagrangeFromSeed(t, func(pk *groth16.ProvingKey) {
		pk.H = slices.Clone(pk.H)
		_, _, g, _ := curve.Generators()
		pk.H[0].Add(&pk.H[0], &g)
	})
	r, stdout, err := benchRun(t, "-shape", testShape, "-backend", "cpu", "-partitions", "2",
		"-h-form", "converted", "-setup-seed", setupSeed)
	require.ErrorIs(t, err, errSameProof)
	require.ErrorContains(t, err, "partition 0")
	require.False(t, r.Verified)
	require.Contains(t, r.Interrupted, "differs from the monomial key's")
	require.Empty(t, r.Runs)
	require.Zero(t, r.Proofs)
	sp := r.Params.Convert.SameProof
	require.False(t, sp.Identical)
	require.NotEqual(t, sp.Monomial, sp.Converted)
	require.Len(t, sp.Monomial, 2*groth16.ProofSize)
	require.Contains(t, stdout, "DIFFERENT")
	require.Contains(t, stdout, "INTERRUPTED")
}
