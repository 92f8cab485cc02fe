package faults_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/queue"
)

// The shipped NATS configurations and the compose stack's demo nkey seed
// (committed demo credentials, docs/security.md).
var (
	composeNATSConf = filepath.Join("..", "..", "deploy", "compose", "nats.conf")
	k8sNATSConf     = filepath.Join("..", "..", "deploy", "k8s", "config", "nats.conf")
	composeNATSSeed = filepath.Join("..", "..", "deploy", "compose", "secrets", "nats-user.nk")
)

// deployedNATSAuth is the authorization of deploy/compose/nats.conf, read
// by nats-server's own configuration parser: its users (one nkey) with the
// permissions the file gives them, and the demo seed the compose services
// connect with. It also checks that deploy/k8s/config/nats.conf gives its
// users the same permissions, and that they deny publishing on
// $JS.EVENT.>.
func deployedNATSAuth(t *testing.T) natsAuth {
	t.Helper()
	compose, err := natsserver.ProcessConfigFile(composeNATSConf)
	require.NoError(t, err, "parse %s", composeNATSConf)
	require.NotEmpty(t, compose.Nkeys, "%s: the compose NATS authenticates nkeys", composeNATSConf)
	require.Empty(t, compose.Users, "%s", composeNATSConf)
	var perms []*natsserver.Permissions
	for _, u := range compose.Nkeys {
		perms = append(perms, u.Permissions)
	}

	// The Kubernetes server's file names its pod and the Secret's password
	// through variables the StatefulSet sets; set only while it is parsed,
	// so that the worker processes do not inherit a NATS password.
	for k, v := range map[string]string{"POD_NAME": "nats-0", "C2_NATS_PASSWORD": "from-the-secret"} {
		old, had := os.LookupEnv(k)
		require.NoError(t, os.Setenv(k, v))
		if had {
			defer os.Setenv(k, old)
		} else {
			defer os.Unsetenv(k)
		}
	}
	k8s, err := natsserver.ProcessConfigFile(k8sNATSConf)
	require.NoError(t, err, "parse %s", k8sNATSConf)
	require.NotEmpty(t, k8s.Users, "%s: the Kubernetes NATS authenticates users", k8sNATSConf)
	require.Empty(t, k8s.Username, "%s: a lone user/password gets no default_permissions; list it in users", k8sNATSConf)
	for _, u := range k8s.Users {
		perms = append(perms, u.Permissions)
	}
	for i, p := range perms {
		require.NotNil(t, p, "every user of the shipped NATS configurations has permissions")
		require.NotNil(t, p.Publish, "user %d: publish permissions", i)
		require.Subset(t, p.Publish.Deny, []string{"$JS.EVENT.>", "$JS.EVENT.ADVISORY.>"}, "user %d may not publish advisories", i)
		require.Equal(t, perms[0], p, "compose and Kubernetes users have the same permissions")
	}

	seed, err := nats.NkeyOptionFromSeed(composeNATSSeed)
	require.NoError(t, err)
	return natsAuth{
		configure: func(o *natsserver.Options) {
			o.Nkeys, o.Users = compose.Nkeys, compose.Users
		},
		client:     []nats.Option{seed},
		workerArgs: []string{"-nats-nkey-seed-file", composeNATSSeed},
	}
}

// NATS run with the shipped deployments' authorization (read from
// deploy/compose/nats.conf, its users' permissions equal to
// deploy/k8s/config/nats.conf's): the coordinator and a worker do all
// their work under it — tasks, blobs, assembly requests, and the
// dead-letter stream, which still captures the advisories the server
// itself publishes (a garbage task terminated as rejected is counted) —
// while a client with the same credentials that publishes a forged
// MAX_DELIVERIES advisory naming a job's queued task (the one forgery the
// job store cannot refute, docs/failures.md) is refused by the server with
// a permissions violation, and the job ends done with a verified proof.
func TestForgedAdvisoryRefusedByDeployedNATSPermissions(t *testing.T) {
	c := newCluster(t, queue.Config{}, server.WatchdogConfig{Interval: time.Second}, deployedNATSAuth(t))
	docs, ids := c.submitMany(1, 8000)
	victim := ids[0]
	j, err := c.store.Get(c.ctx, victim)
	require.NoError(t, err)
	seqs, err := c.store.PartitionSeqs(c.ctx, victim)
	require.NoError(t, err)
	require.Len(t, seqs, j.Partitions)

	// The forger: any client of the deployment, here with the services'
	// own credentials.
	var mu sync.Mutex
	var asyncErrs []error
	forger, err := nats.Connect(c.nats.url(), append(c.auth.client, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		mu.Lock()
		asyncErrs = append(asyncErrs, err)
		mu.Unlock()
	}))...)
	require.NoError(t, err)
	defer forger.Close()

	consumer := queue.ConsumerName(j.Shape, j.Lane)
	maxDeliveries := "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + c.qcfg.Stream + "." + consumer
	adv, err := json.Marshal(map[string]any{"type": "io.nats.jetstream.advisory.v1.max_deliver", "stream": c.qcfg.Stream,
		"consumer": consumer, "stream_seq": seqs[0], "deliveries": c.qcfg.MaxDeliver})
	require.NoError(t, err)
	// Were it let through, the dead-letter stream would take it for the
	// victim's partition 0 run out of deliveries, and fail the job.
	d, err := queue.ParseAdvisory(maxDeliveries, adv)
	require.NoError(t, err)
	require.Equal(t, queue.DeadMaxDeliveries, d.Kind)
	require.Equal(t, seqs[0], d.StreamSeq)

	terminated := "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + c.qcfg.Stream + "." + consumer
	metric := "$JS.EVENT.METRIC.CONSUMER.ACK." + c.qcfg.Stream + "." + consumer
	refused := []string{maxDeliveries, terminated, metric}
	for _, subject := range refused {
		require.NoError(t, forger.Publish(subject, adv), "the client sends it; the server refuses it")
	}
	require.NoError(t, forger.Flush())
	waitFor(t, "the server to refuse the forged advisories", 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(asyncErrs) >= len(refused)
	})
	mu.Lock()
	for i, err := range asyncErrs {
		require.True(t, errors.Is(err, nats.ErrPermissionViolation), "%v", err)
		require.Contains(t, err.Error(), fmt.Sprintf("Publish to %q", refused[i]))
	}
	mu.Unlock()
	require.True(t, forger.IsConnected(), "a refused publish does not cost the client its connection")

	// What the services publish is allowed: a garbage task (on the task
	// subject, as any client may) is rejected by the worker, and the
	// server's own MSG_TERMINATED advisory reaches the dead-letter stream.
	js := c.q.JetStream()
	_, err = js.Publish(c.ctx, c.q.Subject(j.Shape, j.Lane), []byte("\x00\xff not a task"))
	require.NoError(t, err)

	c.startWorker("w-a", "")
	c.requireOutcome(docs, c.settled(ids, 2*time.Minute))
	m := c.srv.Metrics()
	waitFor(t, "the coordinator to count the rejected garbage task", 30*time.Second, func() bool {
		return gaugeValue(t, m, "c2_failures_total", "reason", "rejected") == 1
	})
	require.LessOrEqual(t, gaugeValue(t, m, "c2_failures_total", "reason", "max_deliver"), 0.0, "no dead letter failed a partition")
	evs, err := c.store.Events(c.ctx, victim)
	require.NoError(t, err)
	for _, e := range evs {
		require.NotEqual(t, "error", e.Fields["type"], "the victim records no error: %v", e.Fields)
	}
}
