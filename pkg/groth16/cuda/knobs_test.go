//go:build cgo

package cuda

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTuningKnobsRefuseBadValues: each of the library's environment knobs
// (docs/cuda.md, "Tuning knobs") refuses a value that is not its own with
// an ErrInvalid naming the knob and the value — MSM, NTT and upload knobs
// alike — instead of measuring the default under a typo.
func TestTuningKnobsRefuseBadValues(t *testing.T) {
	lib, dev := gpu(t)
	pts, sc := randomPointsG1(64), randomScalars(64)
	msm := func() error {
		bb, err := lib.Alloc(dev, int64(len(pts))*g1Size)
		require.NoError(t, err)
		defer bb.Free()
		sb, err := lib.Alloc(dev, int64(len(sc))*frSize)
		require.NoError(t, err)
		defer sb.Free()
		require.NoError(t, bb.WriteG1(pts))
		require.NoError(t, sb.WriteFr(sc))
		_, _, err = lib.MSMG1(bb, sb, len(pts))
		return err
	}
	ntt := func() error {
		buf, err := lib.Alloc(dev, 1024*frSize)
		require.NoError(t, err)
		defer buf.Free()
		_, err = lib.NTT(buf, 10, false, false)
		return err
	}
	upload := func() error {
		f := getProveFixture(t)
		syn, _ := f.witness(t, 2, 7, 3)
		b := newTestBackend(t, ResidencyDevice)
		key, err := b.Load(context.Background(), f.pk)
		if err != nil {
			return err // a knob read when the key is made
		}
		defer func() { require.NoError(t, key.Close()) }()
		tk, err := key.Prepare(context.Background(), syn, fixedRnd(1, 2))
		require.NoError(t, err)
		defer tk.Release()
		return tk.Upload(context.Background())
	}
	for _, c := range []struct {
		knob, bad, want string
		run             func() error
	}{
		{"C2G_MSM_WINDOW_BITS", "20x", "want an integer in [", msm},
		{"C2G_MSM_WINDOW_BITS", "99", "want an integer in [", msm},
		{"C2G_MSM_AFFINE", "yes", "want on, off or auto", msm},
		{"C2G_MSM_RED_GROUP", "0", "want an integer in [1, 64]", msm},
		{"C2G_NTT_STEP", "4", "want an integer in [2, 3]", ntt},
		{"C2G_NTT_PASS_BITS", "six", "want an integer in [7, ", ntt},
		{"C2G_UPLOAD_THREADS", "0", "want an integer in [1, 64]", upload},
		{"C2G_UPLOAD_CODES", "auto", "want on or off", upload},
		{"C2G_POOL_KEEP", "all", "want on or off", upload},
		{"C2G_OVERLAP", "yes", "want on, off or auto", upload},
		{"C2G_MSM_SPLIT", "yes", "want on, off or auto", msm},
		{"C2G_MSM_SPLIT", "2", "want on, off or auto", upload},
	} {
		t.Run(c.knob+"="+c.bad, func(t *testing.T) {
			t.Setenv(c.knob, c.bad)
			err := c.run()
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, c.knob+"="+c.bad+": "+c.want)
		})
	}
	// the knobs' own values still work
	t.Setenv("C2G_MSM_AFFINE", "auto")
	t.Setenv("C2G_MSM_WINDOW_BITS", "8")
	require.NoError(t, msm())
	t.Setenv("C2G_NTT_STEP", "2")
	require.NoError(t, ntt())
	t.Setenv("C2G_POOL_KEEP", "off")
	t.Setenv("C2G_OVERLAP", "auto")
	require.NoError(t, upload())
}
