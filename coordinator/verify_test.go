package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
)

// TestVerifyCommand proves a sealed test-micro sector with the system (the
// shape's seeded setup, synthesis and the CPU prover) and checks the proof
// with `coordinator verify`: exit 0 when valid, 1 with the reason when the
// proof or a sector value is wrong, 2 for incomplete flags.
func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const shape = "test-micro"
	params := t.TempDir()
	pk := poreptest.Params(t, params, shape, "coordinator verify")
	var buf bytes.Buffer
	miner, number := uint64(1000), uint64(42)
	res, err := sealer.WriteRandomC1(ctx, sealer.RandomC1Config{Shape: shape, Seed: 5, Miner: &miner, SectorNumber: &number}, &buf)
	require.NoError(t, err)
	out, err := c1.ParseBytes(buf.Bytes())
	require.NoError(t, err)
	comp, err := circuit.ForShape(out.Shape)
	require.NoError(t, err)
	key, err := groth16.NewCPUBackend().Load(ctx, pk)
	require.NoError(t, err)
	defer key.Close()
	proofs := make([]*groth16.Proof, out.Shape.Partitions)
	for k := range proofs {
		w, err := comp.Synthesize(ctx, out, k)
		require.NoError(t, err)
		rnd, err := groth16.NewRandomness()
		require.NoError(t, err)
		proofs[k], _, err = groth16.Prove(ctx, key, w, rnd)
		require.NoError(t, err)
	}
	proof, err := groth16.JoinProofs(proofs)
	require.NoError(t, err)
	dir := t.TempDir()
	rawFile, hexFile := filepath.Join(dir, "proof.bin"), filepath.Join(dir, "proof.hex")
	require.NoError(t, os.WriteFile(rawFile, proof, 0o644))
	require.NoError(t, os.WriteFile(hexFile, []byte(hex.EncodeToString(proof)+"\n"), 0o644))
	// The C1 output, and the same in lotus-bench's envelope with the miner.
	c1File, envFile := filepath.Join(dir, "c1.json"), filepath.Join(dir, "c2in.json")
	require.NoError(t, os.WriteFile(c1File, buf.Bytes(), 0o644))
	env, err := json.Marshal(map[string]any{"SectorNum": number, "Phase1Out": buf.Bytes(), "SectorSize": out.Shape.SectorSize(), "Miner": "f01000"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(envFile, env, 0o644))
	fromC1 := map[string]string{"-shape": "", "-comm-r": "", "-comm-d": "", "-ticket": "", "-seed": ""}
	with := func(a, b map[string]string) map[string]string {
		m := maps.Clone(a)
		maps.Copy(m, b)
		return m
	}

	base := map[string]string{
		"-shape":               shape,
		"-params-dir":          params,
		"-official-params-dir": t.TempDir(),
		"-comm-r":              seal.CommitmentCID(seal.CommR, res.CommR),
		"-comm-d":              seal.CommitmentCID(seal.CommD, res.CommD),
		"-prover-id":           hex.EncodeToString(res.Identity.ProverID[:]),
		"-sector":              strconv.FormatUint(res.Identity.SectorID, 10),
		"-ticket":              hex.EncodeToString(res.Identity.Ticket[:]),
		"-seed":                hex.EncodeToString(out.Seed[:]),
		"-proof":               rawFile,
	}
	verify := func(change map[string]string) (int, string, string) {
		args := []string{"verify"}
		for k, v := range base {
			if nv, ok := change[k]; ok {
				v = nv
			}
			if v != "" {
				args = append(args, k, v)
			}
		}
		for k, v := range change {
			if _, ok := base[k]; !ok {
				args = append(args, k, v)
			}
		}
		var o, e bytes.Buffer
		code := run(ctx, args, &o, &e)
		return code, o.String(), e.String()
	}

	for _, change := range []map[string]string{
		nil,
		{"-proof": hexFile},
		{"-proof": "", "-proof-hex": hex.EncodeToString(proof)},
		{"-comm-r": res.CommR.String(), "-comm-d": "0x" + res.CommD.String()},
		{"-shape": "", "-registered-proof": "C2ClusterTest/" + shape, "-key": "cluster"},
		{"-c1": c1File}, // every flag agrees with the C1 output
		with(fromC1, map[string]string{"-c1": c1File}),
		with(fromC1, map[string]string{"-c1": envFile, "-prover-id": "", "-sector": ""}),
	} {
		code, stdout, stderr := verify(change)
		require.Equal(t, 0, code, "%v: %s", change, stderr)
		require.Contains(t, stdout, "valid: test-micro proof of sector "+base["-sector"])
		require.Contains(t, stdout, "cluster "+filepath.Join(params, shape+".vk"))
	}

	flipped := bytes.Clone(proof)
	flipped[192] ^= 0x20 // partition 1's A, negated
	for _, tc := range []struct {
		change map[string]string
		code   int
		msg    string
	}{
		{map[string]string{"-seed": hex.EncodeToString(bytes.Repeat([]byte{1}, 32))}, 1, "proof does not verify"},
		{map[string]string{"-sector": strconv.FormatUint(res.Identity.SectorID+1, 10)}, 1, "proof does not verify"},
		{map[string]string{"-prover-id": "", "-miner": "f01001"}, 1, "proof does not verify"},
		{map[string]string{"-proof": "", "-proof-hex": hex.EncodeToString(flipped)}, 1, "partition(s) [1] of 2 fail"},
		{map[string]string{"-proof": "", "-proof-hex": hex.EncodeToString(proof[:200])}, 1, "malformed proof: 200 bytes"},
		{map[string]string{"-comm-d": seal.CommitmentCID(seal.CommR, res.CommD)}, 1, "is a comm_r CID"},
		{map[string]string{"-key": "official"}, 1, "no official verifying key"},
		{map[string]string{"-shape": "32GiB", "-proof": "", "-proof-hex": hex.EncodeToString(make([]byte, 1920))}, 1, "lotus fetch-params 32GiB"},
		{map[string]string{"-key": "mine"}, 2, `-key "mine"`},
		{map[string]string{"-proof": ""}, 2, "give one of -proof and -proof-hex"},
		{map[string]string{"-sector": ""}, 2, "-sector: required"},
		{map[string]string{"-miner": "f01000"}, 2, "give one of -miner and -prover-id"},
		{map[string]string{"-seed": ""}, 2, "-seed: required"},
		{map[string]string{"-shape": ""}, 2, "-registered-proof or -shape: required"},
		{map[string]string{"-c1": c1File, "-seed": hex.EncodeToString(bytes.Repeat([]byte{1}, 32))}, 1, "-seed 0101010101010101010101010101010101010101010101010101010101010101 differs from the C1 output's seed"},
		{map[string]string{"-c1": c1File, "-shape": "2KiB"}, 1, "2KiB is 2KiB, the C1 output's proof type is C2ClusterTest/test-micro"},
		{with(fromC1, map[string]string{"-c1": c1File, "-sector": "43"}), 1, "the C1 output is not this sector's"},
		{with(fromC1, map[string]string{"-c1": c1File, "-prover-id": "", "-miner": "f01001"}), 1, "the C1 output is not this sector's"},
		{with(fromC1, map[string]string{"-c1": c1File, "-prover-id": ""}), 2, "-miner or -prover-id: required (the C1 output does not give it)"},
		{with(fromC1, map[string]string{"-c1": envFile, "-sector": "43"}), 1, "-sector 43 differs from the Commit2In envelope's SectorNum 42"},
		{map[string]string{"-c1": filepath.Join(dir, "proof.hex")}, 1, "-c1 " + filepath.Join(dir, "proof.hex")},
		{map[string]string{"-ticket": "abcd"}, 1, "ticket: 4 hex digits, want 64"},
	} {
		code, _, stderr := verify(tc.change)
		require.Equal(t, tc.code, code, "%v: %s", tc.change, stderr)
		require.Contains(t, stderr, tc.msg, "%v", tc.change)
	}
}
