// Package poreptest holds fixtures for tests of code that proves PoRep
// partitions end to end (coordinator, worker): the real, seeded Groth16
// setup of a test shape written where the cluster looks for parameters, and
// C1 outputs of really sealed test sectors. Nothing is faked; the seeds make
// the parameters test-only (whoever knows a seed can forge proofs).
package poreptest

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
)

type paramsKey struct{ dir, shape string }

type paramsEntry struct {
	once sync.Once
	pk   *groth16.ProvingKey
	err  error
}

var (
	paramsMu sync.Mutex
	params   = map[paramsKey]*paramsEntry{}
)

// Params runs the real Groth16 setup of shape once per process and folder,
// seeded with seed, and writes circuit.ParamsPath(dir, shape) and
// circuit.VKPath(dir, shape) where workers and the coordinator read them.
func Params(t testing.TB, dir, shape, seed string) *groth16.ProvingKey {
	t.Helper()
	paramsMu.Lock()
	e, ok := params[paramsKey{dir, shape}]
	if !ok {
		e = &paramsEntry{}
		params[paramsKey{dir, shape}] = e
	}
	paramsMu.Unlock()
	e.once.Do(func() {
		s, err := porep.ShapeByName(shape)
		if err != nil {
			e.err = err
			return
		}
		e.pk, e.err = circuit.Setup(context.Background(), s, circuit.SetupConfig{
			ParamsPath: circuit.ParamsPath(dir, shape),
			VKPath:     circuit.VKPath(dir, shape),
			Seed:       []byte(seed),
		})
	})
	require.NoError(t, e.err)
	return e.pk
}

// SealedC1 seals a random sector of shape (deterministic from seed) and
// returns its C1 output JSON.
func SealedC1(t testing.TB, shape string, seed uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: shape, Seed: seed}, &buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// SealedSectorC1 seals a random sector of shape (deterministic from seed)
// for miner actor id and sector number, so that its replica id is the one
// verify_seal derives from them, and returns its C1 output JSON.
func SealedSectorC1(t testing.TB, shape string, seed, miner, sector uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := sealer.WriteRandomC1(context.Background(), sealer.RandomC1Config{Shape: shape, Seed: seed, Miner: &miner, SectorNumber: &sector}, &buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// Commit2In wraps a C1 output JSON in lotus-bench's Commit2In envelope,
// as Lotus writes it (miner "" leaves the Miner field out).
func Commit2In(t testing.TB, doc []byte, sector, sectorSize uint64, miner string) []byte {
	t.Helper()
	env := map[string]any{"SectorNum": sector, "Phase1Out": doc, "SectorSize": sectorSize}
	if miner != "" {
		env["Miner"] = miner
	}
	b, err := json.Marshal(env)
	require.NoError(t, err)
	return b
}

// TamperPath flips a bit of a tree D path hash in partition 1's first
// challenge proof of a C1 output JSON: the document stays structurally valid
// (the coordinator's cheap checks hash nothing), but the circuit's inclusion
// check cannot be satisfied. The C1 must have at least two partitions.
func TamperPath(t testing.TB, doc []byte) []byte {
	t.Helper()
	out, err := c1.ParseBytes(doc)
	require.NoError(t, err)
	out.VanillaProofs.Partitions()[1][0].CommDProofs.Data.Single.Path.Path[0].Hashes[0][0] ^= 1
	var buf bytes.Buffer
	_, err = out.WriteTo(&buf)
	require.NoError(t, err)
	require.NotEqual(t, doc, buf.Bytes())
	return buf.Bytes()
}
