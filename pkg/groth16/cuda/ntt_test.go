//go:build cgo

package cuda

import (
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/require"
)

// TestNTT compares the device transforms with gnark-crypto's fft.Domain:
// forward, inverse, coset forward and coset inverse, natural order.
func TestNTT(t *testing.T) {
	lib, dev := gpu(t)
	for _, logN := range sized([]int{1, 2, 3, 5, 8, 9, 10, 11, 12, 13, 16, 18, 19, 20, 21, 23}, []int{1, 2, 3, 5, 8, 9, 10, 11, 12, 13, 16, 18}) {
		checkNTT(t, lib, dev, logN)
	}
}

// TestNTTPassBits forces the widest passes (10 stages, otherwise used only
// above 2^27) and narrow ones (7) through C2G_NTT_PASS_BITS.
func TestNTTPassBits(t *testing.T) {
	lib, dev := gpu(t)
	for _, bits := range []string{"10", "7"} {
		t.Run("pass-bits-"+bits, func(t *testing.T) {
			t.Setenv("C2G_NTT_PASS_BITS", bits)
			for _, logN := range sized([]int{10, 17, 20, 23}, []int{10, 13, 16}) {
				checkNTT(t, lib, dev, logN)
			}
		})
	}
}

func checkNTT(t *testing.T, lib *Library, dev, logN int) {
	n := 1 << logN
	d := fft.NewDomain(uint64(n))
	buf, err := lib.Alloc(dev, int64(n)*frSize)
	require.NoError(t, err)
	defer buf.Free()
	for _, mode := range []struct {
		name           string
		inverse, coset bool
	}{{"fwd", false, false}, {"inv", true, false}, {"coset-fwd", false, true}, {"coset-inv", true, true}} {
		t.Run(fmt.Sprintf("%s/2^%d", mode.name, logN), func(t *testing.T) {
			in := randomScalars(n)
			want := append([]fr.Element(nil), in...)
			var opts []fft.Option
			if mode.coset {
				opts = append(opts, fft.OnCoset())
			}
			if mode.inverse {
				d.FFTInverse(want, fft.DIF, opts...)
			} else {
				d.FFT(want, fft.DIF, opts...)
			}
			fft.BitReverse(want)
			require.NoError(t, buf.WriteFr(in))
			_, err := lib.NTT(buf, logN, mode.inverse, mode.coset)
			require.NoError(t, err)
			got, err := buf.ReadFr(n)
			require.NoError(t, err)
			for i := range want {
				require.Equal(t, want[i], got[i], "element %d", i)
			}
		})
	}
}
