package jobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/testcerts"
)

// startRedis starts a private redis-server with o for one test.
func startRedis(t *testing.T, o jobstoretest.Options) *jobstoretest.Redis {
	t.Helper()
	r, err := jobstoretest.StartWith(o)
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	return r
}

// dialAndUse dials dc and runs a job through the store's scripts (create,
// begin, complete: the last partition makes it assembling).
func dialAndUse(t *testing.T, dc jobstore.DialConfig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := jobstore.Dial(ctx, dc, jobstore.Config{Prefix: jobstoretest.Prefix()})
	require.NoError(t, err)
	defer s.Close()
	created, err := s.Create(ctx, newJob("dial-job", 1))
	require.NoError(t, err)
	require.True(t, created)
	_, _, err = s.Begin(ctx, "dial-job", 0, 1, "w")
	require.NoError(t, err)
	res, err := s.Complete(ctx, "dial-job", 0, 1, proof(0), jobstore.PartitionTimings{}, "w")
	require.NoError(t, err)
	require.Equal(t, jobstore.StateAssembling, res.State)
}

// dialErr dials dc and returns its error, which must show none of secrets.
func dialErr(t *testing.T, dc jobstore.DialConfig, secrets ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := jobstore.Dial(ctx, dc, jobstore.Config{Prefix: jobstoretest.Prefix()})
	if err == nil {
		s.Close()
		t.Fatalf("dial %s: no error", dc.Where())
	}
	for _, sec := range secrets {
		require.NotContains(t, err.Error(), sec)
	}
	return err
}

func secretFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// requirepass and an ACL user, each by host:port with the password set or
// from a file, and by redis:// URL; wrong or missing passwords are refused
// naming the problem and no secret.
func TestDialPasswordAndACLUser(t *testing.T) {
	t.Parallel()
	const defaultPW, userPW = "default-pw-9c1e-not-for-logs", "acl-pw-44d2-not-for-logs"
	r := startRedis(t, jobstoretest.Options{Password: defaultPW, Users: map[string]string{"c2": userPW}})

	dialAndUse(t, jobstore.DialConfig{Addr: r.Addr, PasswordFile: secretFile(t, defaultPW+"\n")})
	dialAndUse(t, jobstore.DialConfig{Addr: r.Addr, Username: "c2", Password: userPW})
	dialAndUse(t, jobstore.DialConfig{Addr: "redis://c2:" + userPW + "@" + r.Addr + "/0"})
	dialAndUse(t, jobstore.DialConfig{Addr: "redis://" + r.Addr, Username: "c2", PasswordFile: secretFile(t, userPW)})

	err := dialErr(t, jobstore.DialConfig{Addr: r.Addr, Username: "c2", Password: "x" + userPW}, userPW)
	require.ErrorContains(t, err, "redis "+r.Addr+": WRONGPASS")
	require.ErrorContains(t, err, "the server refused the credentials")
	err = dialErr(t, jobstore.DialConfig{Addr: r.Addr})
	require.ErrorContains(t, err, "NOAUTH")
	require.ErrorContains(t, err, "the server refused the credentials")
	err = dialErr(t, jobstore.DialConfig{Addr: "redis://c2:x" + userPW + "@" + r.Addr}, userPW)
	require.ErrorContains(t, err, "redis redis://c2:xxxxx@"+r.Addr+": WRONGPASS")
	err = dialErr(t, jobstore.DialConfig{Addr: r.Addr, PasswordFile: filepath.Join(t.TempDir(), "absent")})
	require.ErrorContains(t, err, "Redis password file: open ")
}

// A TLS-only server that verifies client certificates: rediss:// and
// host:port with TLS on both work; an unknown CA, no client certificate and
// plain text are refused naming the problem.
func TestDialTLS(t *testing.T) {
	t.Parallel()
	certs := testcerts.New(t)
	const pw = "tls-pw-0b7a-not-for-logs"
	r := startRedis(t, jobstoretest.Options{Password: pw, TLS: certs, AuthClients: true})
	good := jobstore.DialConfig{Addr: "rediss://" + r.Addr, Password: pw, CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}
	dialAndUse(t, good)
	hostPort := good
	hostPort.Addr, hostPort.TLS = r.Addr, true
	dialAndUse(t, hostPort)

	unknown := good
	unknown.CAFile = testcerts.New(t).CAFile
	err := dialErr(t, unknown, pw)
	require.ErrorContains(t, err, "certificate signed by unknown authority")
	require.ErrorContains(t, err, "TLS: check the Redis CA file")

	noCert := good
	noCert.CertFile, noCert.KeyFile = "", ""
	dialErr(t, noCert, pw)

	plain := jobstore.DialConfig{Addr: r.Addr, Password: pw}
	err = dialErr(t, plain, pw)
	require.ErrorContains(t, err, "redis "+r.Addr+":")
}

func TestDialConfigValidateNamesProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dc   jobstore.DialConfig
		want string
	}{
		{jobstore.DialConfig{Addr: "h:1", ClusterAddrs: []string{"h:2"}}, "give one of a Redis address, Sentinel"},
		{jobstore.DialConfig{SentinelMaster: "m", ClusterAddrs: []string{"h:2"}}, "give one of"},
		{jobstore.DialConfig{SentinelMaster: "m"}, "Sentinel needs both"},
		{jobstore.DialConfig{SentinelAddrs: []string{"h:1"}}, "Sentinel needs both"},
		{jobstore.DialConfig{Password: "p", PasswordFile: "f"}, "password or a password file"},
		{jobstore.DialConfig{CertFile: "c"}, "both the certificate and the key file"},
		{jobstore.DialConfig{ClusterAddrs: []string{"redis://u:s3cret@h:1"}}, "host:port, not redis://u:xxxxx@h:1"},
		{jobstore.DialConfig{Addr: "redis-host"}, "neither host:port nor a redis:// or rediss:// URL"},
		{jobstore.DialConfig{Addr: "http://u:s3cret@h:1"}, "Redis URL http://u:xxxxx@h:1: "},
		{jobstore.DialConfig{Addr: "redis://u:s3cret@h:1", Password: "p"}, "URL carries a password and a password is set too"},
	} {
		err := tc.dc.Validate()
		require.ErrorIs(t, err, jobstore.ErrInvalidDialConfig)
		require.ErrorContains(t, err, tc.want)
		require.False(t, strings.Contains(err.Error(), "s3cret"), err.Error())
	}
}

// A master found through a real Redis Sentinel, with requirepass.
func TestDialSentinel(t *testing.T) {
	t.Parallel()
	const pw = "sentinel-master-pw-not-for-logs"
	master := startRedis(t, jobstoretest.Options{Password: pw})
	sentinel, err := jobstoretest.StartSentinel(master, "c2master")
	require.NoError(t, err)
	t.Cleanup(sentinel.Stop)
	dialAndUse(t, jobstore.DialConfig{SentinelMaster: "c2master", SentinelAddrs: []string{sentinel.Addr}, Password: pw})
	err = dialErr(t, jobstore.DialConfig{SentinelMaster: "other", SentinelAddrs: []string{sentinel.Addr}, Password: pw}, pw)
	require.ErrorContains(t, err, "redis master other via sentinels "+sentinel.Addr)
}

// A real three-node Redis Cluster: jobs whose keys land on different nodes
// go through every script; List pipelines across slots; Watch wakes on the
// pub/sub hint alone (its poll is an hour) though the script that
// publishes runs on another node than the subscription, perhaps.
func TestDialCluster(t *testing.T) {
	t.Parallel()
	const pw = "cluster-pw-not-for-logs"
	nodes, err := jobstoretest.StartCluster(3, jobstoretest.Options{Password: pw})
	require.NoError(t, err)
	for _, n := range nodes {
		t.Cleanup(n.Stop)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dc := jobstore.DialConfig{ClusterAddrs: []string{nodes[0].Addr}, PasswordFile: secretFile(t, pw)}
	s, err := jobstore.Dial(ctx, dc, jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: time.Hour})
	require.NoError(t, err)
	defer s.Close()
	const jobs = 12
	owners := map[string]bool{}
	for i := 0; i < jobs; i++ {
		id := "cj" + string(rune('a'+i))
		created, err := s.Create(ctx, newJob(id, 2))
		require.NoError(t, err)
		require.True(t, created)
		_, _, err = s.Begin(ctx, id, 0, 1, "w")
		require.NoError(t, err)
		for _, n := range nodes {
			c := n.Client(t)
			if c.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", c.ClusterKeySlot(ctx, "x:{"+id+"}:job").Val()).Val().(int64) > 0 {
				owners[n.Addr] = true
			}
		}
	}
	require.Greater(t, len(owners), 1, "the jobs' keys should spread over the nodes")
	list, err := s.List(ctx, "", 100)
	require.NoError(t, err)
	require.Len(t, list, jobs)

	woke := make(chan jobstore.State, 4)
	go func() {
		_ = s.Watch(ctx, "cja", func(j *jobstore.Job) bool { woke <- j.State; return j.State == jobstore.StateAssembling })
	}()
	require.Equal(t, jobstore.StateProving, <-woke)
	for p := uint32(0); p < 2; p++ {
		_, err := s.Complete(ctx, "cja", p, 1, proof(int(p)), jobstore.PartitionTimings{}, "w")
		require.NoError(t, err)
	}
	for st := range woke {
		if st == jobstore.StateAssembling {
			break
		}
	}
	err = dialErr(t, jobstore.DialConfig{ClusterAddrs: []string{nodes[1].Addr}, Password: "x" + pw}, pw)
	require.ErrorContains(t, err, "redis cluster "+nodes[1].Addr)
}
