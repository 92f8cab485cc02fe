package telemetry

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// queueDepths gathers c2_queue_depth from the real registry: the value of
// every series present, by shape and lane.
func queueDepths(t *testing.T, m *Metrics) map[QueueKey]float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	require.NoError(t, err)
	out := map[QueueKey]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "c2_queue_depth" {
			continue
		}
		for _, s := range mf.GetMetric() {
			var k QueueKey
			for _, l := range s.GetLabel() {
				switch l.GetName() {
				case "shape":
					k.Shape = l.GetValue()
				case "lane":
					k.Lane = l.GetValue()
				default:
					t.Fatalf("c2_queue_depth has an unexpected label %q", l.GetName())
				}
			}
			out[k] = s.GetGauge().GetValue()
		}
	}
	return out
}

func TestQueueDepthEverySeriesAtZero(t *testing.T) {
	m := NewMetrics()
	require.Empty(t, queueDepths(t, m), "no series before the first refresh")

	shapes, lanes := []string{"32GiB", "test-mini"}, []string{"high", "normal", "low"}
	zero := map[QueueKey]float64{}
	for _, s := range shapes {
		for _, l := range lanes {
			zero[QueueKey{s, l}] = 0
		}
	}

	// An empty queue: every shape × lane is there, at 0.
	m.SetQueueDepth(shapes, lanes, nil)
	require.Equal(t, zero, queueDepths(t, m))

	// Work waiting, including a shape outside the list (a task published by
	// a newer coordinator): its series appears too.
	m.SetQueueDepth(shapes, lanes, map[QueueKey]uint64{{"32GiB", "normal"}: 10, {"test-x", "low"}: 2})
	want := map[QueueKey]float64{}
	for k, v := range zero {
		want[k] = v
	}
	want[QueueKey{"32GiB", "normal"}] = 10
	want[QueueKey{"test-x", "low"}] = 2
	require.Equal(t, want, queueDepths(t, m))

	// Drained: every series returns to 0, none disappears.
	m.SetQueueDepth(shapes, lanes, nil)
	want[QueueKey{"32GiB", "normal"}] = 0
	want[QueueKey{"test-x", "low"}] = 0
	require.Equal(t, want, queueDepths(t, m))
}
