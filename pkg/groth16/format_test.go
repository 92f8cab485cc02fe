package groth16

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/groth16/groth16test"
)

// independentParams is a minimal .params reader written from the format
// description alone (docs/groth16.md, "Formats"): six vk points, then ic, h, l, a, b_g1,
// b_g2, each a u32 big-endian count and uncompressed points, decoded here
// with gnark-crypto's own SetBytes.
type independentParams struct {
	vkG1             [3]curve.G1Affine // alpha, beta, delta
	vkG2             [3]curve.G2Affine // beta, gamma, delta
	ic, h, l, a, bg1 []curve.G1Affine
	bg2              []curve.G2Affine
}

func readIndependent(t *testing.T, b []byte) *independentParams {
	t.Helper()
	r := bytes.NewReader(b)
	g1 := func() curve.G1Affine {
		var buf [96]byte
		_, err := r.Read(buf[:])
		require.NoError(t, err)
		require.Zero(t, buf[0]&0x80, "uncompressed flag expected")
		var p curve.G1Affine
		_, err = p.SetBytes(buf[:])
		require.NoError(t, err)
		return p
	}
	g2 := func() curve.G2Affine {
		var buf [192]byte
		_, err := r.Read(buf[:])
		require.NoError(t, err)
		require.Zero(t, buf[0]&0x80, "uncompressed flag expected")
		var p curve.G2Affine
		_, err = p.SetBytes(buf[:])
		require.NoError(t, err)
		return p
	}
	count := func() int {
		var c [4]byte
		_, err := r.Read(c[:])
		require.NoError(t, err)
		return int(binary.BigEndian.Uint32(c[:]))
	}
	g1s := func() []curve.G1Affine {
		n := count()
		out := make([]curve.G1Affine, n)
		for i := range out {
			out[i] = g1()
		}
		return out
	}
	p := &independentParams{}
	p.vkG1[0] = g1()
	p.vkG1[1] = g1()
	p.vkG2[0] = g2()
	p.vkG2[1] = g2()
	p.vkG1[2] = g1()
	p.vkG2[2] = g2()
	p.ic, p.h, p.l, p.a, p.bg1 = g1s(), g1s(), g1s(), g1s(), g1s()
	n := count()
	p.bg2 = make([]curve.G2Affine, n)
	for i := range p.bg2 {
		p.bg2[i] = g2()
	}
	require.Zero(t, r.Len(), "bytes left after b_g2")
	return p
}

func writeParamsBytes(t *testing.T, pk *ProvingKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteParams(&buf, pk))
	return buf.Bytes()
}

func TestParamsLayoutMatchesIndependentReader(t *testing.T) {
	f := getFixture(t)
	b := writeParamsBytes(t, f.pk)
	ip := readIndependent(t, b)
	vk := f.pk.VK
	require.Equal(t, [3]curve.G1Affine{vk.AlphaG1, vk.BetaG1, vk.DeltaG1}, ip.vkG1)
	require.Equal(t, [3]curve.G2Affine{vk.BetaG2, vk.GammaG2, vk.DeltaG2}, ip.vkG2)
	require.Equal(t, vk.IC, ip.ic)
	require.Equal(t, f.pk.H, ip.h)
	require.Equal(t, f.pk.L, ip.l)
	require.Equal(t, f.pk.A, ip.a)
	require.Equal(t, f.pk.BG1, ip.bg1)
	require.Equal(t, f.pk.BG2, ip.bg2)
}

func TestParamsFileRoundTrip(t *testing.T) {
	f := getFixture(t)
	b := writeParamsBytes(t, f.pk)
	path := filepath.Join(t.TempDir(), "test.params")
	require.NoError(t, os.WriteFile(path, b, 0o600))

	var lines bytes.Buffer
	pk, err := ReadParams(path, ParamsProgress(ProgressLines(&lines)))
	require.NoError(t, err)
	require.Equal(t, f.pk, pk)
	require.Contains(t, lines.String(), "params: decode 100%")

	pk2, err := ReadParams(path, SkipSubgroupCheck(), ParamsWorkers(1))
	require.NoError(t, err)
	require.Equal(t, f.pk, pk2)

	pf, err := OpenParams(path)
	require.NoError(t, err)
	defer pf.Close()
	l := pf.Layout()
	require.Equal(t, len(f.pk.H), l.H.Count)
	require.Equal(t, int64(len(b)), l.Size)
	vk, err := pf.VerifyingKey()
	require.NoError(t, err)
	require.Equal(t, f.pk.VK, *vk)
	h, err := pf.G1Section(context.Background(), SectionH)
	require.NoError(t, err)
	require.Equal(t, f.pk.H, h)
	require.Equal(t, len(h)+1, cap(h), "room to extend H to the domain in place (ConvertHCosetLagrangeInPlace)")
	bg2, err := pf.BG2(context.Background())
	require.NoError(t, err)
	require.Equal(t, f.pk.BG2, bg2)
	_, err = pf.G1Section(context.Background(), SectionBG2)
	require.Error(t, err, "b_g2 is not a G1 section")
	require.NoError(t, pf.Close())
	_, err = pf.VerifyingKey()
	require.Error(t, err, "use after Close")
	require.NoError(t, pf.Close())

	// The .vk file is the params file's prefix.
	var vkBuf bytes.Buffer
	require.NoError(t, WriteVerifyingKey(&vkBuf, &f.pk.VK))
	require.Equal(t, b[:vkBuf.Len()], vkBuf.Bytes())
	vk2, err := ReadVerifyingKey(bytes.NewReader(vkBuf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, f.pk.VK, *vk2)

	// File helpers: atomic writes, and trailing bytes refused for .vk files.
	dir := t.TempDir()
	require.NoError(t, WriteParamsFile(filepath.Join(dir, "p.params"), f.pk))
	written, err := os.ReadFile(filepath.Join(dir, "p.params"))
	require.NoError(t, err)
	require.Equal(t, b, written)
	vkPath := filepath.Join(dir, "p.vk")
	require.NoError(t, WriteVerifyingKeyFile(vkPath, &f.pk.VK))
	vk3, err := ReadVerifyingKeyFile(vkPath)
	require.NoError(t, err)
	require.Equal(t, f.pk.VK, *vk3)
	require.NoError(t, os.WriteFile(vkPath, append(vkBuf.Bytes(), 1), 0o600))
	_, err = ReadVerifyingKeyFile(vkPath)
	require.ErrorIs(t, err, ErrTrailingData)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temporary file left behind")
}

func TestSetupDeterministicFromSeed(t *testing.T) {
	sys := groth16test.ChainSystem(30, 1, 2, 3)
	pk1, _, err := SetupR1CS(context.Background(), sys, SetupSeed([]byte("a")))
	require.NoError(t, err)
	pk2, _, err := SetupR1CS(context.Background(), sys, SetupSeed([]byte("a")))
	require.NoError(t, err)
	pk3, _, err := SetupR1CS(context.Background(), sys, SetupSeed([]byte("b")))
	require.NoError(t, err)
	require.Equal(t, writeParamsBytes(t, pk1), writeParamsBytes(t, pk2))
	require.NotEqual(t, pk1.VK.AlphaG1, pk3.VK.AlphaG1)
	pk4, _, err := SetupR1CS(context.Background(), sys)
	require.NoError(t, err)
	require.NotEqual(t, pk1.VK.DeltaG2, pk4.VK.DeltaG2)
}

// offSubgroupG1 returns an uncompressed encoding of a point on E(Fp)
// outside the prime-order subgroup.
func offSubgroupG1(t *testing.T) [96]byte {
	p := groth16test.NotInSubgroupG1(t, 1)
	return p.RawBytes()
}

func offSubgroupG2(t *testing.T) [192]byte {
	p := groth16test.NotInSubgroupG2(t, 1)
	return p.RawBytes()
}

func TestParamsCorruptionNamesSection(t *testing.T) {
	// A small circuit keeps this test fast.
	sys := groth16test.ChainSystem(20, 1, 2, 3)
	pk, _, err := SetupR1CS(context.Background(), sys, SetupSeed([]byte("corrupt")))
	require.NoError(t, err)
	good := writeParamsBytes(t, pk)
	l, err := ParseParamsLayout(good)
	require.NoError(t, err)
	badG1 := offSubgroupG1(t)
	badG2 := offSubgroupG2(t)

	for _, s := range l.Sections() {
		require.Positive(t, s.Count, s.Name)
		t.Run(s.Name, func(t *testing.T) {
			// Truncated inside the section.
			_, err := DecodeParams(good[:s.Offset+int64(s.PointSize)/2])
			requireFormatErr(t, err, s.Name, ErrTruncated)
			// Count larger than what is left.
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[s.Offset-4:], 0xfffffff0)
			_, err = DecodeParams(b)
			requireFormatErr(t, err, s.Name, ErrTruncated)

			last := s.Offset + int64(s.Count-1)*int64(s.PointSize)
			// Coordinate ≥ p (all ones below the flag bits).
			b = bytes.Clone(good)
			b[last] = 0x1f
			for i := int64(1); i < 48; i++ {
				b[last+i] = 0xff
			}
			_, err = DecodeParams(b)
			requireFormatErr(t, err, s.Name, ErrNonCanonical)
			// Off the curve: change the last byte of y.
			b = bytes.Clone(good)
			b[last+int64(s.PointSize)-1] ^= 1
			_, err = DecodeParams(b)
			requireFormatErr(t, err, s.Name, ErrNotOnCurve)
			// Compressed flag in an uncompressed section.
			b = bytes.Clone(good)
			b[last] |= 0x80
			_, err = DecodeParams(b)
			requireFormatErr(t, err, s.Name, ErrBadFlags)
			// On the curve, outside the subgroup.
			b = bytes.Clone(good)
			if s.PointSize == 96 {
				copy(b[last:], badG1[:])
			} else {
				copy(b[last:], badG2[:])
			}
			_, err = DecodeParams(b)
			requireFormatErr(t, err, s.Name, ErrNotInSubgroup)
			if s.Name != SectionIC {
				// Trusted files skip exactly this check.
				_, err = DecodeParams(b, SkipSubgroupCheck())
				require.NoError(t, err)
				// A checker given with SubgroupCheckWith finds the point
				// instead of the decoder: the same error, point and offset.
				var cpu *FormatError
				_, err = DecodeParams(b)
				require.ErrorAs(t, err, &cpu)
				c := &countingChecker{}
				_, err = DecodeParams(b, SubgroupCheckWith(c))
				requireFormatErr(t, err, s.Name, ErrNotInSubgroup)
				var ext *FormatError
				require.ErrorAs(t, err, &ext)
				require.Equal(t, *cpu, *ext)
				require.Equal(t, s.Count-1, ext.Index)
				require.Equal(t, last, ext.Offset)
				require.Positive(t, c.points, "the checker saw the section")
			}
		})
	}
	t.Run("vk", func(t *testing.T) {
		_, err := DecodeParams(good[:100])
		requireFormatErr(t, err, SectionVK, ErrTruncated)
		b := bytes.Clone(good)
		b[96+95] ^= 1 // beta_g1's y
		_, err = DecodeParams(b)
		requireFormatErr(t, err, SectionVK, ErrNotOnCurve)
		require.ErrorContains(t, err, "beta_g1")
		b = bytes.Clone(good)
		copy(b[0:], badG1[:]) // alpha_g1 outside the subgroup: never skipped
		_, err = DecodeParams(b, SkipSubgroupCheck())
		requireFormatErr(t, err, SectionVK, ErrNotInSubgroup)
	})
	t.Run("trailing", func(t *testing.T) {
		_, err := DecodeParams(append(bytes.Clone(good), 0))
		requireFormatErr(t, err, SectionBG2, ErrTrailingData)
	})
	t.Run("infinity", func(t *testing.T) {
		// Infinity is a valid point (e.g. L of an unused variable) but only
		// with every other bit zero.
		b := bytes.Clone(good)
		off := l.H.Offset
		clear(b[off : off+96])
		b[off] = 0x40
		pk2, err := DecodeParams(b)
		require.NoError(t, err)
		require.True(t, pk2.H[0].IsInfinity())
		b[off+50] = 1
		_, err = DecodeParams(b)
		requireFormatErr(t, err, SectionH, ErrNonCanonical)
		// (0, 0) without the infinity flag is not a point.
		b[off] = 0
		b[off+50] = 0
		_, err = DecodeParams(b)
		requireFormatErr(t, err, SectionH, ErrNotOnCurve)
	})
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bad.params")
		require.NoError(t, os.WriteFile(path, good[:len(good)-1], 0o600))
		_, err := ReadParams(path)
		requireFormatErr(t, err, SectionBG2, ErrTruncated)
		require.ErrorContains(t, err, path)
		_, err = ReadParams(filepath.Join(t.TempDir(), "missing.params"))
		require.ErrorIs(t, err, os.ErrNotExist)
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		_, err = ReadParams(path)
		requireFormatErr(t, err, SectionVK, ErrTruncated)
	})
	t.Run("vk-reader", func(t *testing.T) {
		var vkb bytes.Buffer
		require.NoError(t, WriteVerifyingKey(&vkb, &pk.VK))
		_, err := ReadVerifyingKey(bytes.NewReader(vkb.Bytes()[:vkb.Len()-1]))
		requireFormatErr(t, err, SectionIC, ErrTruncated)
		b := bytes.Clone(vkb.Bytes())
		binary.BigEndian.PutUint32(b[vkFixedSize:], 0xffffffff)
		_, err = ReadVerifyingKey(bytes.NewReader(b))
		requireFormatErr(t, err, SectionIC, ErrTruncated)
	})
}

func requireFormatErr(t *testing.T, err error, section string, want error) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, want)
	var fe *FormatError
	require.ErrorAs(t, err, &fe, "error %v is not a *FormatError", err)
	require.Equal(t, section, fe.Section, "error: %v", err)
	require.Contains(t, err.Error(), fmt.Sprintf("section %s", section))
}

func TestSetupProgressAndCancel(t *testing.T) {
	sys := groth16test.ChainSystem(30, 1, 2, 3)
	var lines bytes.Buffer
	_, _, err := SetupR1CS(context.Background(), sys, SetupSeed([]byte("p")), SetupProgress(ProgressLines(&lines)), SetupWorkers(1))
	require.NoError(t, err)
	for _, stage := range []string{"setup: lagrange 100%", "setup: qap 100%", "setup: g1 100%", "setup: g2 100%"} {
		require.Contains(t, lines.String(), stage)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = SetupR1CS(ctx, sys)
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = SetupR1CS(context.Background(), nil)
	require.Error(t, err)
}

// countingChecker is a SubgroupChecker on the CPU (gnark-crypto's
// IsInSubGroup, the decoder's own test), counting the points it is given;
// fail, when set, is returned instead of a verdict.
type countingChecker struct {
	points int
	calls  int
	fail   error
}

func (c *countingChecker) FirstNotInSubgroupG1(pts []curve.G1Affine) (int, error) {
	return firstNotIn(c, pts, (*curve.G1Affine).IsInSubGroup)
}

func (c *countingChecker) FirstNotInSubgroupG2(pts []curve.G2Affine) (int, error) {
	return firstNotIn(c, pts, (*curve.G2Affine).IsInSubGroup)
}

func firstNotIn[P any](c *countingChecker, pts []P, in func(*P) bool) (int, error) {
	c.calls++
	if c.fail != nil {
		return 0, c.fail
	}
	c.points += len(pts)
	for i := range pts {
		if !in(&pts[i]) {
			return i, nil
		}
	}
	return -1, nil
}

func TestSubgroupCheckWith(t *testing.T) {
	sys := groth16test.ChainSystem(20, 1, 2, 3)
	pk, _, err := SetupR1CS(context.Background(), sys, SetupSeed([]byte("checker")))
	require.NoError(t, err)
	good := writeParamsBytes(t, pk)
	l, err := ParseParamsLayout(good)
	require.NoError(t, err)
	proving := l.H.Count + l.L.Count + l.A.Count + l.BG1.Count + l.BG2.Count

	t.Run("every proving point, once, and the same key", func(t *testing.T) {
		ch := &countingChecker{}
		var lines bytes.Buffer
		got, err := DecodeParams(good, SubgroupCheckWith(ch), ParamsProgress(ProgressLines(&lines)))
		require.NoError(t, err)
		require.Equal(t, proving, ch.points)
		require.Equal(t, 5, ch.calls, "one call per section at this size")
		want, err := DecodeParams(good)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Contains(t, lines.String(), "params: subgroup check 100%")
	})
	t.Run("skip wins", func(t *testing.T) {
		ch := &countingChecker{}
		_, err := DecodeParams(good, SubgroupCheckWith(ch), SkipSubgroupCheck())
		require.NoError(t, err)
		require.Zero(t, ch.calls)
	})
	t.Run("checker error", func(t *testing.T) {
		boom := errors.New("device lost")
		_, err := DecodeParams(good, SubgroupCheckWith(&countingChecker{fail: boom}))
		require.ErrorIs(t, err, boom)
		require.ErrorContains(t, err, "section h: subgroup check")
	})
	t.Run("sections one by one", func(t *testing.T) {
		b := bytes.Clone(good)
		bad := offSubgroupG2(t)
		copy(b[l.BG2.Offset:], bad[:])
		ch := &countingChecker{}
		pf, err := OpenParams(writeParamsFile(t, b), SubgroupCheckWith(ch))
		require.NoError(t, err)
		defer pf.Close()
		_, err = pf.G1Section(context.Background(), SectionL)
		require.NoError(t, err)
		require.Equal(t, l.L.Count, ch.points)
		_, err = pf.G1Section(context.Background(), SectionIC) // the verifying key's: on the CPU
		require.NoError(t, err)
		require.Equal(t, l.L.Count, ch.points)
		_, err = pf.BG2(context.Background())
		requireFormatErr(t, err, SectionBG2, ErrNotInSubgroup)
		require.ErrorContains(t, err, "point 0 at offset")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		pf, err := OpenParams(writeParamsFile(t, good), SubgroupCheckWith(&countingChecker{}))
		require.NoError(t, err)
		defer pf.Close()
		_, err = pf.ProvingKey(ctx)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func writeParamsFile(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.params")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}
