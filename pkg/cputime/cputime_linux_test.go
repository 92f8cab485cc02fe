package cputime

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// spin burns the calling thread's CPU until it has spent d more.
func spin(d time.Duration) {
	for t0 := Thread(); Thread()-t0 < d; {
	}
}

// TestTimer: a goroutine that burns 30 ms of CPU on its thread measures at
// least that, and no more than the whole process spent meanwhile.
func TestTimer(t *testing.T) {
	p0 := Process()
	var sum atomic.Int64
	tm := Start()
	spin(30 * time.Millisecond)
	tm.Stop(&sum)
	p1 := Process()
	got := time.Duration(sum.Load())
	require.GreaterOrEqual(t, got, 30*time.Millisecond)
	require.LessOrEqual(t, got, p1-p0)
}

type looper struct {
	left   int
	metric float64
	unit   string
}

func (l *looper) Loop() bool                          { l.left--; return l.left >= 0 }
func (l *looper) ReportMetric(n float64, unit string) { l.metric, l.unit = n, unit }

// TestReportPerOp: the metric is the thread's CPU time per loop.
func TestReportPerOp(t *testing.T) {
	l := &looper{left: 4}
	ReportPerOp(l, func() { spin(5 * time.Millisecond) })
	require.Equal(t, "cpu-ns/op", l.unit)
	require.GreaterOrEqual(t, l.metric, float64(5*time.Millisecond))
	require.Less(t, l.metric, float64(time.Second))
}
