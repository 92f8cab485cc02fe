// Package memlimit sets the Go runtime's soft memory limit of a process
// that holds tens of GB live (a 32 GiB worker: compiled circuit, partition
// buffers, parameters until they are resident on the device). Without a
// limit the collector lets the heap grow to twice the live set, which does
// not fit such a host; with one it collects harder as the heap nears it.
//
// A setting is "auto" (the default), "off" or a size:
//
//	auto   90 % of the host's memory (MemTotal, or the cgroup's limit when
//	       lower), unless $GOMEMLIMIT is set: Go has applied that already
//	off    nothing is set: Go's own default ($GOMEMLIMIT when set, else
//	       no limit)
//	size   exactly that ("120GiB", "512MiB", "100GB", "123456789"),
//	       $GOMEMLIMIT notwithstanding
//
// The worker (memory_limit) and c2-bench (-mem-limit) share it.
package memlimit

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Setting is a parsed memory-limit setting.
type Setting struct {
	// Mode is ModeAuto, ModeOff or ModeBytes.
	Mode string
	// Bytes is the limit of ModeBytes.
	Bytes int64
}

// Modes of a Setting.
const (
	ModeAuto  = "auto"
	ModeOff   = "off"
	ModeBytes = "bytes"
)

// AutoPercent is the share of the host's memory "auto" sets.
const AutoPercent = 90

// Parse reads "auto" (or ""), "off" or a size (ParseBytes).
func Parse(s string) (Setting, error) {
	switch strings.TrimSpace(s) {
	case "", ModeAuto:
		return Setting{Mode: ModeAuto}, nil
	case ModeOff:
		return Setting{Mode: ModeOff}, nil
	}
	n, err := ParseBytes(s)
	if err != nil {
		return Setting{}, fmt.Errorf("%w (want auto, off or a size such as 120GiB)", err)
	}
	return Setting{Mode: ModeBytes, Bytes: n}, nil
}

// String is the setting as Parse reads it.
func (s Setting) String() string {
	if s.Mode == ModeBytes {
		return strconv.FormatInt(s.Bytes, 10)
	}
	if s.Mode == "" {
		return ModeAuto
	}
	return s.Mode
}

// ParseBytes reads "123", "120GiB", "512MiB", "64KiB", "100GB", "500MB"
// (fractions allowed: "1.5GiB").
func ParseBytes(s string) (int64, error) {
	v, mult := strings.TrimSpace(s), int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}} {
		if rest, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = rest, u.m
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || n*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return int64(n * float64(mult)), nil
}

// Resolve decides the limit to set: 0 for none (leave Go's), and a line
// saying why. gomemlimit is $GOMEMLIMIT ("" when unset), total the host's
// memory (0 when unknown).
func Resolve(s Setting, gomemlimit string, total int64) (limit int64, why string) {
	switch s.Mode {
	case ModeOff:
		if gomemlimit != "" {
			return 0, "memory_limit off: Go's own, from $GOMEMLIMIT=" + gomemlimit
		}
		return 0, "memory_limit off: no soft memory limit"
	case ModeBytes:
		if gomemlimit != "" {
			return s.Bytes, "configured (overrides $GOMEMLIMIT=" + gomemlimit + ")"
		}
		return s.Bytes, "configured"
	}
	switch {
	case gomemlimit != "":
		return 0, "auto: from $GOMEMLIMIT=" + gomemlimit
	case total <= 0:
		return 0, "auto: the host's memory is unknown: no soft memory limit"
	}
	return total / 100 * AutoPercent, fmt.Sprintf("auto: %d %% of the host's memory (%d bytes)", AutoPercent, total)
}

// Apply sets the process's soft memory limit per s ($GOMEMLIMIT and the
// host's memory as Resolve reads them) and returns the limit in effect
// afterwards (math.MaxInt64: none) and why.
func Apply(s Setting) (effective int64, why string) {
	limit, why := Resolve(s, os.Getenv("GOMEMLIMIT"), HostMemory())
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	return debug.SetMemoryLimit(-1), why
}

// HostMemory is the host's memory (MemTotal), or the cgroup's limit when it
// is lower; 0 when neither can be read.
func HostMemory() int64 {
	var total int64
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if v := strings.Fields(rest); len(v) > 0 {
					if n, err := strconv.ParseInt(v[0], 10, 64); err == nil {
						total = n << 10
					}
				}
			}
		}
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if data, err := os.ReadFile(p); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
				total = n
			}
		}
	}
	return total
}

// Format renders a limit for a log line ("112.0 GiB", "none").
func Format(limit int64) string {
	if limit <= 0 || limit == math.MaxInt64 {
		return "none"
	}
	return fmt.Sprintf("%.1f GiB", float64(limit)/(1<<30))
}
