//go:build cgo

package cuda

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"weak"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

type proveFixture struct {
	n       int
	sys     *r1cs.System // the chain's constraints (and one instance's values)
	circuit *groth16.Circuit
	pk      *groth16.ProvingKey
	cpu     groth16.Key

	lagrangeOnce sync.Once
	pkLagrange   *groth16.ProvingKey // pk's toxic waste, H in coset-Lagrange form
}

// lagrange is the fixture's key in coset-Lagrange form (same toxic waste:
// it proves the CPU backend's monomial-key bytes).
func (f *proveFixture) lagrange(t *testing.T) *groth16.ProvingKey {
	t.Helper()
	f.lagrangeOnce.Do(func() {
		pk, _, err := groth16.SetupR1CS(context.Background(), f.sys, groth16.SetupSeed([]byte("cuda-test")),
			groth16.SetupHForm(groth16.HCosetLagrange))
		require.NoError(t, err)
		f.pkLagrange = pk
	})
	require.NotNil(t, f.pkLagrange, "coset-Lagrange setup failed earlier")
	return f.pkLagrange
}

var (
	proveOnce sync.Once
	proveFix  *proveFixture
)

const powChain = 1500

func getProveFixture(t *testing.T) *proveFixture {
	t.Helper()
	gpu(t) // skip before the setup when there is no device
	proveOnce.Do(func() {
		ctx := context.Background()
		sys := groth16test.ChainSystem(powChain, 1, 2, 3)
		pk, d, err := groth16.SetupR1CS(ctx, sys, groth16.SetupSeed([]byte("cuda-test")))
		require.NoError(t, err)
		c, err := groth16.CircuitOf(ctx, sys)
		require.NoError(t, err)
		aAux, bIn, bAux := c.Densities()
		require.True(t, d.Equal(&groth16.Densities{ADensityAux: aAux, BDensityInput: bIn, BDensityAux: bAux}))
		cpu, err := groth16.NewCPUBackend().Load(ctx, pk)
		require.NoError(t, err)
		proveFix = &proveFixture{n: powChain, sys: sys, circuit: c, pk: pk, cpu: cpu}
	})
	require.NotNil(t, proveFix, "fixture setup failed earlier")
	return proveFix
}

// witness synthesizes the chain for (x, w, z) (groth16.SynthesizeSystem)
// and returns the instance and the public inputs without the leading one,
// from the plain-arithmetic oracle (which the instance's inputs must equal).
func (f *proveFixture) witness(t *testing.T, x, w, z uint64) (*groth16.Synthesized, []fr.Element) {
	t.Helper()
	syn, err := groth16.SynthesizeSystem(groth16test.ChainSystem(f.n, x, w, z))
	require.NoError(t, err)
	public := groth16test.ChainPublic(f.n, x, w, z)
	require.Equal(t, public, syn.Input[1:])
	return syn, public
}

func fixedRnd(r, s uint64) groth16.Randomness {
	var rnd groth16.Randomness
	rnd.R.SetUint64(r)
	rnd.S.SetUint64(s)
	return rnd
}

// cpuProof is the oracle: syn proved by the CPU backend with rnd, as bytes.
func (f *proveFixture) cpuProof(t *testing.T, syn *groth16.Synthesized, rnd groth16.Randomness) []byte {
	t.Helper()
	p, _, err := groth16.Prove(context.Background(), f.cpu, syn, rnd)
	require.NoError(t, err)
	return proofBytes(t, p)
}

func proofBytes(t *testing.T, p *groth16.Proof) []byte {
	t.Helper()
	b, err := p.MarshalBinary()
	require.NoError(t, err)
	return b
}

func newTestBackend(t *testing.T, res Residency) *Backend {
	t.Helper()
	lib, dev := gpu(t)
	b, err := New(Config{LibraryPath: lib.Path(), Device: dev, Residency: res})
	require.NoError(t, err)
	return b
}

// TestProveMatchesCPU proves a test circuit on the GPU (parameters resident
// and pinned; resident with the L, A and B MSMs beside H and one after
// another) and requires the CPU backend's bytes with the same r, s, and a
// proof that verifies.
func TestProveMatchesCPU(t *testing.T) {
	f := getProveFixture(t)
	ctx := context.Background()
	syn, public := f.witness(t, 3, 0xfeedface1234, 11)
	rnd := fixedRnd(0x1234567, 0x7654321)
	want := f.cpuProof(t, syn, rnd)
	for _, c := range []struct {
		name   string
		res    Residency
		chunk  int
		lanes  string // C2G_UPLOAD_THREADS: the witness upload's host threads
		serial bool   // C2G_OVERLAP=off: the MSMs one after another
		split  bool   // C2G_MSM_SPLIT=on: the H MSM on split bases (auto leaves a key this small unsplit)
		lagr   bool   // the key's H in coset-Lagrange form (four NTTs), still the monomial CPU key's bytes
	}{{"device", ResidencyDevice, 0, "1", false, false, false}, {"device-upload-lanes-serial", ResidencyDevice, 0, "5", true, false, false},
		{"device-split", ResidencyDevice, 0, "", false, true, false}, {"device-split-serial", ResidencyDevice, 0, "", true, true, false},
		{"pinned", ResidencyPinned, 0, "", false, false, false}, {"pinned-chunks", ResidencyPinned, 1200, "", false, false, false},
		{"device-lagrange", ResidencyDevice, 0, "", false, false, true}, {"device-lagrange-split", ResidencyDevice, 0, "", false, true, true},
		{"device-lagrange-split-serial", ResidencyDevice, 0, "", true, true, true}, {"pinned-lagrange", ResidencyPinned, 1200, "", false, false, true}} {
		res := c.res
		t.Run(c.name, func(t *testing.T) {
			lib, dev := gpu(t)
			if c.lanes != "" {
				t.Setenv("C2G_UPLOAD_THREADS", c.lanes)
			}
			if c.serial {
				t.Setenv("C2G_OVERLAP", "off")
			}
			if c.split {
				t.Setenv("C2G_MSM_SPLIT", "on")
			}
			var last [2]int64
			// pinned-chunks streams the large queries in two chunks
			b, err := New(Config{LibraryPath: lib.Path(), Device: dev, Residency: res, StreamChunk: c.chunk,
				Progress: func(stage string, done, total int64) { last = [2]int64{done, total} }})
			require.NoError(t, err)
			pk := f.pk
			if c.lagr {
				pk = f.lagrange(t)
			}
			key, err := b.Load(ctx, pk)
			require.NoError(t, err)
			defer func() { require.NoError(t, key.Close()) }()
			require.Positive(t, last[1])
			require.Equal(t, last[1], last[0], "Load reports its end")
			require.Equal(t, string(res), key.Residency())
			task, err := key.Prepare(ctx, syn, rnd)
			require.NoError(t, err)
			require.Positive(t, task.DeviceBytes())
			require.NoError(t, task.Upload(ctx))
			require.NoError(t, task.Compute(ctx))
			got, err := task.Finish(ctx)
			require.NoError(t, err)
			task.Release()
			task.Release() // idempotent
			require.Equal(t, want, proofBytes(t, got))
			require.NoError(t, groth16.Verify(&f.pk.VK, got, public))
			// auto overlaps where resident with room for two such tasks (here)
			require.Equal(t, res == ResidencyDevice && !c.serial, task.(interface{ Overlapped() bool }).Overlapped())
			tm := task.Timings()
			if c.split {
				require.Positive(t, tm.MSMHSplitBits, "the H MSM on split bases")
			} else {
				require.Zero(t, tm.MSMHSplitBits, "no split bases")
			}
			require.Positive(t, tm.Compute)
			require.Positive(t, tm.MSMH)
		})
	}
}

// TestResidentKeyReleasesHostPoints: a key resident on the device keeps no
// reference to the host copy of the points (41 GiB at 32 GiB), so they are
// collected once the caller drops them, and the key still proves the CPU
// backend's bytes; a pinned key keeps them (the device reads them there).
func TestResidentKeyReleasesHostPoints(t *testing.T) {
	f := getProveFixture(t)
	ctx := context.Background()
	syn, public := f.witness(t, 4, 0xc0ffee, 7)
	rnd := fixedRnd(0x42, 0x43)
	want := f.cpuProof(t, syn, rnd)
	for _, res := range []Residency{ResidencyDevice, ResidencyPinned} {
		t.Run(string(res), func(t *testing.T) {
			b := newTestBackend(t, res)
			pk := &groth16.ProvingKey{VK: f.pk.VK, H: slices.Clone(f.pk.H), L: slices.Clone(f.pk.L),
				A: slices.Clone(f.pk.A), BG1: slices.Clone(f.pk.BG1), BG2: slices.Clone(f.pk.BG2)}
			points := weak.Make(&pk.L[0])
			key, err := b.Load(ctx, pk)
			require.NoError(t, err)
			defer func() { require.NoError(t, key.Close()) }()
			pk = nil
			runtime.GC()
			runtime.GC()
			if res == ResidencyDevice {
				require.Nil(t, points.Value(), "a device-resident key still references the host points")
			} else {
				require.NotNil(t, points.Value(), "a pinned key must keep the host points")
			}
			got, _, err := groth16.Prove(ctx, key, syn, rnd)
			require.NoError(t, err)
			require.Equal(t, want, proofBytes(t, got))
			require.NoError(t, groth16.Verify(&f.pk.VK, got, public))
		})
	}
}

// TestProveConcurrentSlots runs two tasks of one key at once (two slots on
// one device), each with its own witness and randomness.
func TestProveConcurrentSlots(t *testing.T) {
	f := getProveFixture(t)
	ctx := context.Background()
	b := newTestBackend(t, ResidencyDevice)
	key, err := b.Load(ctx, f.pk)
	require.NoError(t, err)
	defer func() { require.NoError(t, key.Close()) }()
	type job struct {
		syn  *groth16.Synthesized
		rnd  groth16.Randomness
		want []byte
	}
	jobs := make([]job, sized(4, 2))
	for i := range jobs {
		syn, _ := f.witness(t, uint64(5+i), uint64(0xabc0+i), uint64(13+i))
		rnd := fixedRnd(uint64(100+i), uint64(200+i))
		jobs[i] = job{syn, rnd, f.cpuProof(t, syn, rnd)}
	}
	errs := make([]error, len(jobs))
	got := make([][]byte, len(jobs))
	var wg sync.WaitGroup
	for slot := 0; slot < 2; slot++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := slot; i < len(jobs); i += 2 {
				p, _, err := groth16.Prove(ctx, key, jobs[i].syn, jobs[i].rnd)
				if err == nil {
					got[i], err = p.MarshalBinary()
				}
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for i := range jobs {
		require.NoError(t, errs[i], "job %d", i)
		require.Equal(t, jobs[i].want, got[i], "job %d", i)
	}
}

// TestProveTwoDevices proves on every device when there are several.
func TestProveTwoDevices(t *testing.T) {
	lib, _ := gpu(t)
	n, err := lib.DeviceCount()
	require.NoError(t, err)
	if n < 2 {
		t.Skipf("one CUDA device: the two-device test needs two")
	}
	f := getProveFixture(t)
	ctx := context.Background()
	syn, _ := f.witness(t, 9, 0x55aa55aa, 3)
	rnd := fixedRnd(77, 88)
	want := f.cpuProof(t, syn, rnd)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for d := 0; d < n; d++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := New(Config{LibraryPath: lib.Path(), Device: d, Residency: ResidencyDevice})
			if err != nil {
				errs[d] = err
				return
			}
			key, err := b.Load(ctx, f.pk)
			if err != nil {
				errs[d] = err
				return
			}
			defer key.Close()
			p, _, err := groth16.Prove(ctx, key, syn, rnd)
			if err == nil && string(proofBytes(t, p)) != string(want) {
				err = errors.New("proof differs from the CPU's")
			}
			errs[d] = err
		}()
	}
	wg.Wait()
	for d, err := range errs {
		require.NoError(t, err, "device %d", d)
	}
}

// TestProveErrors: a shape mismatch (also of the value codes) fails in Prepare, an unsatisfied
// witness in Compute (ErrUnsatisfied), a cancelled context before Compute
// with its error; a key with open tasks refuses to close.
func TestProveErrors(t *testing.T) {
	f := getProveFixture(t)
	ctx := context.Background()
	b := newTestBackend(t, ResidencyDevice)
	key, err := b.Load(ctx, f.pk)
	require.NoError(t, err)
	syn, _ := f.witness(t, 3, 99, 4)

	bad := *syn
	bad.Aux = bad.Aux[:len(bad.Aux)-1]
	_, err = key.Prepare(ctx, &bad, fixedRnd(1, 2))
	require.ErrorIs(t, err, groth16.ErrShape)

	// value codes must come one per value
	short := *syn
	short.Codes = &groth16.ValueCodes{A: make([]uint8, len(syn.A)), B: make([]uint8, len(syn.B)),
		C: make([]uint8, len(syn.C)-1), Aux: make([]uint8, len(syn.Aux))}
	_, err = key.Prepare(ctx, &short, fixedRnd(1, 2))
	require.ErrorIs(t, err, groth16.ErrShape)
	require.ErrorContains(t, err, "value codes for")

	broken := *syn
	broken.C = append([]fr.Element(nil), syn.C...)
	broken.C[7].SetUint64(12345)
	task, err := key.Prepare(ctx, &broken, fixedRnd(1, 2))
	require.NoError(t, err)
	require.Error(t, key.Close(), "a key with an open task must not close")
	require.NoError(t, task.Upload(ctx))
	err = task.Compute(ctx)
	require.ErrorIs(t, err, groth16.ErrUnsatisfied)
	task.Release()

	task, err = key.Prepare(ctx, syn, fixedRnd(1, 2))
	require.NoError(t, err)
	require.NoError(t, task.Upload(ctx))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, task.Compute(cctx), context.Canceled)
	_, err = task.Finish(ctx)
	require.Error(t, err)
	task.Release()

	// a compute that failed on the device cannot be run again
	task, err = key.Prepare(ctx, &broken, fixedRnd(1, 2))
	require.NoError(t, err)
	require.NoError(t, task.Upload(ctx))
	require.ErrorIs(t, task.Compute(ctx), groth16.ErrUnsatisfied)
	err = task.Compute(ctx)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "earlier compute")
	task.Release()
	require.NoError(t, key.Close())

	// A coset-Lagrange key does not read c (its C share comes from the
	// assignment, through L and the inputs): the tampered c proves the
	// honest proof. An a that does not match the assignment gives a proof
	// that fails verification (c2g.h, C2G_H_COSET_LAGRANGE).
	lkey, err := b.Load(ctx, f.lagrange(t))
	require.NoError(t, err)
	prove := func(w *groth16.Synthesized) *groth16.Proof {
		p, _, err := groth16.Prove(ctx, lkey, w, fixedRnd(1, 2))
		require.NoError(t, err)
		return p
	}
	require.Equal(t, f.cpuProof(t, syn, fixedRnd(1, 2)), proofBytes(t, prove(&broken)), "c is not read")
	badA := *syn
	badA.A = append([]fr.Element(nil), syn.A...)
	badA.A[7].SetUint64(12345)
	badA.Codes = nil // the codes would still name the old value
	_, public := f.witness(t, 3, 99, 4)
	require.Error(t, groth16.Verify(&f.pk.VK, prove(&badA), public))
	require.NoError(t, lkey.Close())
}

// TestDeviceBytesCoverUpload checks that DeviceBytes, reported before
// anything is allocated, covers what Upload takes from the device, with
// the L, A and B MSMs one after another (C2G_OVERLAP=off) and beside H
// (on: their own scratch).
func TestDeviceBytesCoverUpload(t *testing.T) {
	f := getProveFixture(t)
	ctx := context.Background()
	syn, _ := f.witness(t, 3, 99, 4)
	for _, mode := range []string{"off", "on"} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv("C2G_OVERLAP", mode)
			b := newTestBackend(t, ResidencyDevice)
			key, err := b.Load(ctx, f.pk)
			require.NoError(t, err)
			defer key.Close()
			task, err := key.Prepare(ctx, syn, fixedRnd(1, 2))
			require.NoError(t, err)
			defer task.Release()
			// what the library says before a key exists (auto residency's
			// reserve) is what the key's task takes
			sh, err := pkShape(f.pk)
			require.NoError(t, err)
			var pin runtime.Pinner
			defer pin.Unpin()
			desc := b.pkDesc(f.pk, sh, &pin)
			desc.residency = residencyDevice
			want, err := b.lib.a.descTaskBytes(b.cfg.Device, desc, mode == "on")
			require.NoError(t, err)
			require.Equal(t, want, task.DeviceBytes(), "c2g_desc_task_bytes, overlap %s", mode)
			if mode == "on" {
				inOrder, err := b.lib.a.descTaskBytes(b.cfg.Device, desc, false)
				require.NoError(t, err)
				// (a shape this small rounds both to the pool's 32 MiB granule)
				require.LessOrEqual(t, inOrder, want, "overlapped MSMs take their own scratch")
				desc.residency = residencyPinned
				_, err = b.lib.a.descTaskBytes(b.cfg.Device, desc, true)
				require.ErrorContains(t, err, "only a resident key overlaps")
			}
			before, err := b.lib.DeviceInfo(b.cfg.Device)
			require.NoError(t, err)
			require.NoError(t, task.Upload(ctx))
			after, err := b.lib.DeviceInfo(b.cfg.Device)
			require.NoError(t, err)
			used := before.FreeBytes - after.FreeBytes
			// DeviceBytes already rounds to the stream-ordered pool's granules; allow
			// 4 MiB for what the runtime maps beside the task (streams, events)
			require.LessOrEqual(t, used, task.DeviceBytes()+(4<<20), "upload took %d bytes, DeviceBytes said %d", used, task.DeviceBytes())
		})
	}
}

// TestSyntheticKeyMatchesCPU proves a random (H-consistent) witness with a
// synthetic key of device-generated points, then proves the same statement
// on the CPU with the points read back: the bytes must agree. This covers
// arbitrary densities, aux values mostly 0, 1 and r − 1 (the MSMs' summed
// classes) and the upload of a, b, c: from ordinary memory with random a
// and b, and — as c2g-bench's partition runs — page-locked with value
// codes and a and b drawn like a PoRep partition's, a with 2s as the XOR
// constraints make them (the upload sends the codes, 2 among them).
func TestSyntheticKeyMatchesCPU(t *testing.T) {
	b := newTestBackend(t, ResidencyDevice)
	ctx := context.Background()
	rows, domain, aux := sized(3000, 900), sized(4096, 1024), sized(5000, 1300)
	for _, c := range []struct {
		name   string
		a, b   ValueProfile
		pinned bool
		hForm  groth16.HForm
	}{
		{"random a and b", ValueProfile{}, ValueProfile{}, false, groth16.HMonomial},
		{"page-locked with codes", ValueProfile{Frac01: 0.6, FracMinusOne: 0.05, FracTwo: 0.3}, ValueProfile{Frac01: 0.6, FracMinusOne: 0.3}, true, groth16.HMonomial},
		{"coset-lagrange, page-locked with codes", ValueProfile{Frac01: 0.6, FracMinusOne: 0.05, FracTwo: 0.3}, ValueProfile{Frac01: 0.6, FracMinusOne: 0.3}, true, groth16.HCosetLagrange},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, sh := NewSyntheticWitness(SyntheticWitnessSpec{Rows: rows, Domain: domain, Inputs: 7, Aux: aux,
				Frac01: 0.75, FracMinusOne: 0.15, A: c.a, B: c.b, Codes: c.pinned, ADensity: 0.997, BDensity: 0.254, Seed: 5})
			sh.HForm = c.hForm
			if c.pinned {
				require.NoError(t, w.CheckCodes())
				ranges0, _ := b.Library().RegisteredHost()
				release, err := b.RegisterWitness(w)
				require.NoError(t, err)
				ranges, _ := b.Library().RegisteredHost()
				require.Equal(t, ranges0+8, ranges, "four vectors and their codes")
				defer release()
			}
			k, err := b.LoadSynthetic(ctx, sh, 9)
			require.NoError(t, err)
			defer k.Close()
			rnd := fixedRnd(31337, 4242)
			got, tm, err := groth16.Prove(ctx, k, w, rnd)
			require.NoError(t, err)
			if c.pinned {
				vecs := 3
				if c.hForm == groth16.HCosetLagrange {
					vecs = 2 // c is not read
				}
				require.Equal(t, int64(vecs*rows+aux)*frSize, tm.UploadCodedBytes, "a, b, (c) and aux went as codes")
			} else {
				require.Zero(t, tm.UploadCodedBytes)
			}
			pk, err := k.(*key).syntheticParams()
			require.NoError(t, err)
			cpu, err := groth16.NewCPUBackend().Load(ctx, pk)
			require.NoError(t, err)
			want, _, err := groth16.Prove(ctx, cpu, w, rnd)
			require.NoError(t, err)
			require.Equal(t, proofBytes(t, want), proofBytes(t, got))
		})
	}
}
