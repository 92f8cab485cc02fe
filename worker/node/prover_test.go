package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/worker/interlock"
	"github.com/c2cluster/c2cluster/worker/node"
)

// The prover without queue or store (what worker/cmd/c2-bench drives):
// parameters from memory and from the folder, slots per device, the
// stages in order through the interlock, a proof that verifies, and a
// tampered input failing its synthesis stage as a StageError.
func TestProverProvesPartitionsWithoutQueue(t *testing.T) {
	pk := params(t)
	ctx := context.Background()
	compiled := compiledShape(t)

	_, err := node.NewShapeParams(testShape, compiled, &groth16.ProvingKey{VK: pk.VK})
	require.ErrorIs(t, err, node.ErrParams)
	// A coset-Lagrange key has one H point more and one LInput point per
	// input (groth16.HCosetLagrange); its sections are checked for that form.
	lagr := *pk
	lagr.HForm = groth16.HCosetLagrange
	lagr.H = append(slices.Clip(pk.H), pk.H[0])
	lagr.LInput = slices.Clone(pk.VK.IC)
	_, err = node.NewShapeParams(testShape, compiled, &lagr)
	require.NoError(t, err)
	lagr.LInput = lagr.LInput[1:]
	_, err = node.NewShapeParams(testShape, compiled, &lagr)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorContains(t, err, "l_input")
	lagr.LInput, lagr.H = slices.Clone(pk.VK.IC), pk.H
	_, err = node.NewShapeParams(testShape, compiled, &lagr)
	require.ErrorContains(t, err, "coset-Lagrange form")
	fromFolder, err := node.LoadShapeParams(ctx, testShape, paramsDir, true, nil, nil)
	require.NoError(t, err)
	require.Equal(t, pk.VK.AlphaG1, fromFolder.VerifyingKey().AlphaG1)
	_, err = node.LoadShapeParams(ctx, testShape, t.TempDir(), true, nil, nil)
	require.ErrorIs(t, err, node.ErrParams)
	require.ErrorIs(t, err, os.ErrNotExist)

	sp, err := node.NewShapeParams(testShape, compiled, pk)
	require.NoError(t, err)
	require.Equal(t, testShape, sp.Name())
	require.Equal(t, fromFolder.Bytes(), sp.Bytes(), "the size of the .params layout")
	var events []interlock.Event
	p, err := node.NewProver(ctx, node.Config{ID: "bench", Backend: "cpu", Interlock: "exclusive",
		Observer: func(e interlock.Event) { events = append(events, e) }}, sp)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, "cpu", p.Backend())
	require.Equal(t, []string{"cpu0"}, p.DeviceNames())
	require.Equal(t, 1, p.WorkersPerDevice(), "the CPU backend's default")
	require.Equal(t, "host", p.Residency(testShape))
	require.False(t, sp.HostKeyReleased(), "the CPU backend reads the host points: they stay")

	require.ErrorContains(t, p.SetInterlock("turbo", 1, 0), "turbo")
	require.ErrorContains(t, p.SetInterlock(interlock.ModeNone, 1000, 0), "exceeds")
	require.NoError(t, p.SetInterlock(interlock.ModeCompute, 2, 0))
	slots := p.Slots()
	require.Len(t, slots, 2)
	require.Equal(t, "bench/cpu0/1", slots[1].Name())
	require.Equal(t, interlock.ModeCompute, p.Interlock())

	out, err := c1.ParseBytes(sealedC1(t, 7))
	require.NoError(t, err)
	var stages []string
	res, err := slots[1].ProvePartition(ctx, testShape, out, 1, func(_ context.Context, stage string) error {
		stages = append(stages, stage)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{node.StageSynthesize, node.StageProve, node.StageVerify}, stages)
	in, err := circuit.PublicInputs(out, 1)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(&pk.VK, res.Proof, in))
	require.Positive(t, res.Synthesis)
	require.Positive(t, res.Prove)
	require.Positive(t, res.Verify)
	require.Positive(t, res.Interlock.Backend.Compute)
	acquired := 0
	for _, e := range events {
		require.Equal(t, "bench/cpu0/1", e.Who)
		if e.Kind == interlock.EventAcquired {
			require.Equal(t, interlock.LockCompute, e.Lock, "the interlock set by SetInterlock")
			acquired++
		}
	}
	require.Equal(t, 1, acquired)

	// A hook's error is returned as it is.
	stop := errors.New("stop here")
	_, err = slots[0].ProvePartition(ctx, testShape, out, 0, func(_ context.Context, stage string) error {
		if stage == node.StageProve {
			return stop
		}
		return nil
	})
	require.Equal(t, stop, err)

	// A tampered path hash: the witness fits, the circuit's checks fail.
	bad, err := c1.ParseBytes(poreptest.TamperPath(t, sealedC1(t, 7)))
	require.NoError(t, err)
	_, err = slots[0].ProvePartition(ctx, testShape, bad, 1, nil)
	var se *node.StageError
	require.ErrorAs(t, err, &se)
	require.Equal(t, node.StageSynthesize, se.Stage)
	require.ErrorIs(t, err, circuit.ErrUnsatisfied)

	// One set of partition buffers served the three syntheses (one slot at
	// a time); each came back, also from the failed paths.
	st := p.BufferStats(testShape)
	require.Equal(t, 2, st.Limit, "one set per slot")
	require.Equal(t, int64(1), st.Allocated)
	require.Equal(t, int64(2), st.Reused)
	require.Equal(t, 0, st.InUse)
}

// TestProverReusesBuffers: two slots prove a job's partitions again and
// again at the same time; every proof verifies against the natively
// computed public inputs, and the witnesses lived in at most two buffer
// sets (one per slot), reused for every other partition.
func TestProverReusesBuffers(t *testing.T) {
	pk := params(t)
	ctx := context.Background()
	compiled := compiledShape(t)
	sp, err := node.NewShapeParams(testShape, compiled, pk)
	require.NoError(t, err)
	p, err := node.NewProver(ctx, node.Config{ID: "reuse", Backend: "cpu", GPUWorkersPerDevice: 2, CPUThreads: 1}, sp)
	require.NoError(t, err)
	defer p.Close()
	out, err := c1.ParseBytes(sealedC1(t, 9))
	require.NoError(t, err)
	const rounds = 3
	slots := p.Slots()
	errs := make(chan error, len(slots))
	for i, s := range slots {
		go func() {
			for r := range rounds {
				k := (i + r) % out.Shape.Partitions
				res, err := s.ProvePartition(ctx, testShape, out, k, nil)
				if err == nil {
					var in []fr.Element
					if in, err = circuit.PublicInputs(out, k); err == nil {
						err = groth16.Verify(&pk.VK, res.Proof, in)
					}
				}
				if err != nil {
					errs <- fmt.Errorf("%s round %d partition %d: %w", s.Name(), r, k, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range slots {
		require.NoError(t, <-errs)
	}
	st := p.BufferStats(testShape)
	require.Equal(t, 2, st.Limit)
	require.LessOrEqual(t, st.Allocated, int64(2))
	require.Equal(t, int64(len(slots)*rounds), st.Allocated+st.Reused)
	require.GreaterOrEqual(t, st.Reused, int64(len(slots)*rounds-2))
	require.Equal(t, 0, st.InUse)
	require.Zero(t, st.Waits, "a slot never waits for a set")
}

// TestProverWarnsWhenBuffersExceedMemoryLimit: at start the prover warns,
// with the figures, when its slots' partition buffer sets and what is live
// after loading would not fit under the Go memory limit, and says nothing
// when they fit.
func TestProverWarnsWhenBuffersExceedMemoryLimit(t *testing.T) {
	pk := params(t)
	ctx := context.Background()
	sp, err := node.NewShapeParams(testShape, compiledShape(t), pk)
	require.NoError(t, err)
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	open := func(limit int64) (string, *node.Prover) {
		var logs bytes.Buffer
		debug.SetMemoryLimit(limit)
		p, err := node.NewProver(ctx, node.Config{ID: "mem", Backend: "cpu", GPUWorkersPerDevice: 3, CPUThreads: 1,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, sp)
		debug.SetMemoryLimit(before)
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		return logs.String(), p
	}
	logs, _ := open(1 << 50)
	require.NotContains(t, logs, "memory limit", "everything fits under 1 PiB")

	logs, p := open(8 << 20) // far below the compiled circuit and parameters alone
	var warning struct {
		Msg     string `json:"msg"`
		Slots   int    `json:"slots"`
		Buffers int64  `json:"buffer_bytes"`
		Live    int64  `json:"live_heap_bytes"`
		Limit   int64  `json:"memory_limit_bytes"`
	}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		if strings.Contains(line, "exceed the Go memory limit") {
			require.NoError(t, json.Unmarshal([]byte(line), &warning))
		}
	}
	require.Contains(t, warning.Msg, "lower gpu_workers_per_device", logs)
	require.Equal(t, 3, warning.Slots)
	require.Equal(t, 3*p.BufferStats(testShape).SetBytes, warning.Buffers, "three sets of the shape's size")
	require.Equal(t, int64(8<<20), warning.Limit)
	require.Greater(t, warning.Live+warning.Buffers, warning.Limit)
}
