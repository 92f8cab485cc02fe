package memlimit

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Setting{
		"":          {Mode: ModeAuto},
		"auto":      {Mode: ModeAuto},
		"off":       {Mode: ModeOff},
		"120GiB":    {Mode: ModeBytes, Bytes: 120 << 30},
		"1.5GiB":    {Mode: ModeBytes, Bytes: 3 << 29},
		"512MiB":    {Mode: ModeBytes, Bytes: 512 << 20},
		"100GB":     {Mode: ModeBytes, Bytes: 100e9},
		"500MB":     {Mode: ModeBytes, Bytes: 500e6},
		"64KiB":     {Mode: ModeBytes, Bytes: 64 << 10},
		"123456789": {Mode: ModeBytes, Bytes: 123456789},
	} {
		got, err := Parse(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"lots", "-1GiB", "0", "GiB", "1e30GiB", "12 apples"} {
		_, err := Parse(bad)
		require.ErrorContains(t, err, "not a size", bad)
	}
	require.Equal(t, "auto", Setting{}.String())
	require.Equal(t, "1024", Setting{Mode: ModeBytes, Bytes: 1024}.String())
}

func TestResolve(t *testing.T) {
	const total = 100 << 30
	limit, why := Resolve(Setting{Mode: ModeAuto}, "", total)
	require.Equal(t, int64(total/100*90), limit)
	require.Contains(t, why, "90 %")
	limit, why = Resolve(Setting{Mode: ModeAuto}, "50GiB", total)
	require.Zero(t, limit, "auto leaves $GOMEMLIMIT to Go")
	require.Contains(t, why, "$GOMEMLIMIT=50GiB")
	limit, _ = Resolve(Setting{Mode: ModeAuto}, "", 0)
	require.Zero(t, limit, "unknown host memory: none")
	limit, why = Resolve(Setting{Mode: ModeBytes, Bytes: 7 << 30}, "50GiB", total)
	require.Equal(t, int64(7<<30), limit, "a configured size wins over $GOMEMLIMIT")
	require.Contains(t, why, "overrides")
	limit, why = Resolve(Setting{Mode: ModeOff}, "", total)
	require.Zero(t, limit)
	require.Contains(t, why, "no soft memory limit")
}

// TestApply sets a size and reads it back from the runtime (then restores
// the limit the test process had).
func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	got, why := Apply(Setting{Mode: ModeBytes, Bytes: 3 << 40})
	require.Equal(t, int64(3<<40), got)
	require.Equal(t, int64(3<<40), debug.SetMemoryLimit(-1))
	require.NotEmpty(t, why)
	require.Equal(t, "3072.0 GiB", Format(got))
	require.Equal(t, "none", Format(math.MaxInt64))
	require.Positive(t, HostMemory(), "/proc/meminfo is readable on the test machines")
}
