package server_test

import (
	"crypto/sha256"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

var depthLine = regexp.MustCompile(`(?m)^c2_queue_depth\{lane="([^"]*)",shape="([^"]*)"\} (\S+)$`)

// scrapeDepth reads c2_queue_depth from the coordinator's /metrics.
func scrapeDepth(t *testing.T, url string) map[telemetry.QueueKey]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[telemetry.QueueKey]float64{}
	for _, m := range depthLine.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err)
		out[telemetry.QueueKey{Shape: m[2], Lane: m[1]}] = v
	}
	return out
}

// TestQueueDepthGaugeReturnsToZero: /metrics carries c2_queue_depth for
// every registered shape × configured lane, 0 while nothing waits; a lane
// with tasks shows their count and goes back to 0 (not absent) once they
// are gone.
func TestQueueDepthGaugeReturnsToZero(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{DepthInterval: 50 * time.Millisecond, Metrics: telemetry.NewMetrics()})

	zero := map[telemetry.QueueKey]float64{}
	for _, s := range porep.ShapeNames() {
		for _, l := range queue.LanesDefault {
			zero[telemetry.QueueKey{Shape: s, Lane: l}] = 0
		}
	}
	require.Eventually(t, func() bool { return len(scrapeDepth(t, co.http.URL)) > 0 }, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, zero, scrapeDepth(t, co.http.URL), "an empty queue: every shape × lane at 0")

	var seqs []uint64
	for p := range uint32(2) {
		sum := sha256.Sum256([]byte("depth-job"))
		pub, err := c.q.Publish(c.ctx, &c2clusterv1.PartitionTask{JobId: "depth-job", Partition: p, Partitions: 2,
			Shape: testShape, Lane: "low", BlobRef: "depth-job", BlobSize: 1, BlobSha256: sum[:],
			EnqueuedUnixMs: time.Now().UnixMilli()})
		require.NoError(t, err)
		seqs = append(seqs, pub.Seq)
	}
	busy := map[telemetry.QueueKey]float64{}
	for k, v := range zero {
		busy[k] = v
	}
	busy[telemetry.QueueKey{Shape: testShape, Lane: "low"}] = 2
	require.Eventually(t, func() bool { return equalDepth(busy, scrapeDepth(t, co.http.URL)) }, 10*time.Second, 20*time.Millisecond)

	n, err := c.q.DeleteTasks(c.ctx, seqs)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Eventually(t, func() bool { return equalDepth(zero, scrapeDepth(t, co.http.URL)) }, 10*time.Second, 20*time.Millisecond,
		"drained: back to 0 for every series, got %v", scrapeDepth(t, co.http.URL))
}

func equalDepth(a, b map[telemetry.QueueKey]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
