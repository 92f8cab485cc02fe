// Package queuetest starts a real embedded NATS JetStream server for tests
// of packages that use pkg/queue. It is no fake: the server is nats-server
// itself, in process, with file storage in a temporary folder.
package queuetest

import (
	"testing"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/c2cluster/c2cluster/pkg/queue"
)

// Server starts an embedded JetStream server for t, stopped at cleanup.
func Server(t testing.TB) *queue.Embedded {
	t.Helper()
	srv, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("queuetest: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// Conn connects to srv, closed at cleanup.
func Conn(t testing.TB, srv *queue.Embedded) *nats.Conn {
	t.Helper()
	nc, err := queue.Connect(srv.URL(), t.Name())
	if err != nil {
		t.Fatalf("queuetest: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// LeakOptions are the goleak options for packages that store blobs:
// nats.go v1.55.0's object store Put starts a publisher goroutine
// (resetPendingAcksOnReconnect) that can read its status channel after
// Put's deferred cleanup set it to nil, and then blocks forever. The race is
// upstream (jetstream/publish.go, object.go cleanupReplySub); everything
// else must still be leak-free.
func LeakOptions() []goleak.Option {
	return []goleak.Option{goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect")}
}
