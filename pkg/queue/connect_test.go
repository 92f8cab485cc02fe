package queue_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/testcerts"
)

func TestCheckServerVersion(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"2.10.4", "2.10.5", "2.11.0", "2.14.0", "2.15.2", "v2.15.2", "3.0.0", "2.10.4+build.7"} {
		require.NoError(t, queue.CheckServerVersion(v), v)
	}
	for _, v := range []string{"2.9.10", "2.9.25", "2.10.3", "2.10.4-RC.1", "2.10.0-beta.1", "1.4.1", "0.9.6"} {
		err := queue.CheckServerVersion(v)
		require.ErrorIs(t, err, queue.ErrServerTooOld, v)
		require.ErrorContains(t, err, "nats-server "+v+";")
		require.ErrorContains(t, err, "needs "+queue.MinServerVersion+" or newer")
	}
	for _, v := range []string{"", "2.10", "two.ten.four", "2.10.4-", "2.010.4"} {
		err := queue.CheckServerVersion(v)
		require.ErrorIs(t, err, queue.ErrServerTooOld, v)
		require.ErrorContains(t, err, "cannot read the server's version")
	}
}

func TestConnConfigValidateNamesProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  queue.ConnConfig
		want string
	}{
		{queue.ConnConfig{User: "a", Password: "p", Token: "t"}, "one way to authenticate, not user/password and token"},
		{queue.ConnConfig{NKeySeedFile: "s", CredsFile: "c"}, "not nkey seed and creds file"},
		{queue.ConnConfig{Password: "p"}, "a password needs a user"},
		{queue.ConnConfig{User: "a", Password: "p", PasswordFile: "f"}, "the password or a password file"},
		{queue.ConnConfig{Token: "t", TokenFile: "f"}, "the token or a token file"},
		{queue.ConnConfig{CertFile: "c"}, "both the certificate and the key file"},
	} {
		err := tc.cfg.Validate()
		require.ErrorIs(t, err, queue.ErrInvalidConfig)
		require.ErrorContains(t, err, tc.want)
		_, err = queue.Dial(tc.cfg)
		require.ErrorContains(t, err, tc.want)
	}
}

// writeFile writes a secret file of the test.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// requireNoSecret fails when err's text shows any of the secrets.
func requireNoSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	require.Error(t, err)
	for _, s := range secrets {
		require.NotContains(t, err.Error(), s)
	}
}

// A JetStream server that requires TLS with client certificates and a user
// and password: the whole queue works through it, and a wrong password,
// an unknown CA or a missing client certificate are refused with errors
// that say so and show no secret.
func TestDialTLSWithClientCertAndPassword(t *testing.T) {
	t.Parallel()
	certs := testcerts.New(t)
	const password = "pw-7f3e9a1c-not-for-logs"
	srv, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: t.TempDir(), Configure: func(o *server.Options) {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, CaFile: certs.CAFile, Verify: true})
		require.NoError(t, err)
		o.TLSConfig, o.TLS, o.TLSVerify = tc, true, true
		o.Users = []*server.User{{Username: "c2", Password: password}}
	}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	require.True(t, strings.HasPrefix(srv.URL(), "tls://"), srv.URL())

	good := queue.ConnConfig{URL: srv.URL(), Name: t.Name(), User: "c2", PasswordFile: writeFile(t, "pw", password+"\n"),
		CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}
	nc, err := queue.Dial(good)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	require.True(t, nc.TLSRequired())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, nc, queue.Config{})
	require.NoError(t, err)
	pub, err := q.Publish(ctx, task("tls-job", 0, 1, "normal"))
	require.NoError(t, err)
	require.NotZero(t, pub.Seq)

	wrong := good
	wrong.PasswordFile, wrong.Password = "", "wrong-"+password
	_, err = queue.Dial(wrong)
	requireNoSecret(t, err, password)
	require.ErrorIs(t, err, nats.ErrAuthorization)
	require.ErrorContains(t, err, "queue: connect "+srv.URL())
	require.ErrorContains(t, err, "the server refused the credentials")

	// The password in the URL instead: never echoed.
	u := strings.Replace(srv.URL(), "tls://", "tls://c2:wrong-"+password+"@", 1)
	inURL := queue.ConnConfig{URL: u, CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}
	_, err = queue.Dial(inURL)
	requireNoSecret(t, err, password)
	require.ErrorContains(t, err, "c2:xxxxx@")
	require.ErrorIs(t, err, nats.ErrAuthorization)

	other := testcerts.New(t)
	unknownCA := good
	unknownCA.CAFile = other.CAFile
	_, err = queue.Dial(unknownCA)
	requireNoSecret(t, err, password)
	require.ErrorContains(t, err, "certificate signed by unknown authority")
	require.ErrorContains(t, err, "TLS: check the NATS CA file")

	noClientCert := good
	noClientCert.CertFile, noClientCert.KeyFile = "", ""
	_, err = queue.Dial(noClientCert)
	requireNoSecret(t, err, password)
	require.Error(t, err)

	missing := good
	missing.PasswordFile = filepath.Join(t.TempDir(), "absent")
	_, err = queue.Dial(missing)
	require.ErrorContains(t, err, "NATS password file: open ")
}

func TestDialTokenAndNKey(t *testing.T) {
	t.Parallel()
	const token = "tok-51c0ffee-not-for-logs"
	tokSrv, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: t.TempDir(), Configure: func(o *server.Options) {
		o.Authorization = token
	}})
	require.NoError(t, err)
	t.Cleanup(tokSrv.Shutdown)
	nc, err := queue.Dial(queue.ConnConfig{URL: tokSrv.URL(), TokenFile: writeFile(t, "token", token)})
	require.NoError(t, err)
	nc.Close()
	_, err = queue.Dial(queue.ConnConfig{URL: tokSrv.URL()})
	require.ErrorIs(t, err, nats.ErrAuthorization)
	// A token in the URL is redacted like a password.
	_, err = queue.Dial(queue.ConnConfig{URL: strings.Replace(tokSrv.URL(), "nats://", "nats://x"+token+"@", 1)})
	requireNoSecret(t, err, token)
	require.ErrorContains(t, err, "nats://xxxxx@127.0.0.1:")

	user, err := nkeys.CreateUser()
	require.NoError(t, err)
	pub, err := user.PublicKey()
	require.NoError(t, err)
	seed, err := user.Seed()
	require.NoError(t, err)
	nkSrv, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: t.TempDir(), Configure: func(o *server.Options) {
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}})
	require.NoError(t, err)
	t.Cleanup(nkSrv.Shutdown)
	nc, err = queue.Dial(queue.ConnConfig{URL: nkSrv.URL(), NKeySeedFile: writeFile(t, "user.nk", string(seed))})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = queue.Open(ctx, nc, queue.Config{})
	require.NoError(t, err)
	nc.Close()

	stranger, err := nkeys.CreateUser()
	require.NoError(t, err)
	strangerSeed, err := stranger.Seed()
	require.NoError(t, err)
	_, err = queue.Dial(queue.ConnConfig{URL: nkSrv.URL(), NKeySeedFile: writeFile(t, "stranger.nk", string(strangerSeed))})
	requireNoSecret(t, err, string(strangerSeed))
	require.ErrorIs(t, err, nats.ErrAuthorization)
	_, err = queue.Dial(queue.ConnConfig{URL: nkSrv.URL(), NKeySeedFile: writeFile(t, "bad.nk", "not a seed")})
	require.ErrorContains(t, err, "NATS nkey seed file")
}

// Decentralised auth: an operator, an account and a user JWT in a creds
// file, as nsc makes them.
func TestDialCredsFile(t *testing.T) {
	t.Parallel()
	op, err := nkeys.CreateOperator()
	require.NoError(t, err)
	opPub, err := op.PublicKey()
	require.NoError(t, err)
	opJWT, err := jwt.NewOperatorClaims(opPub).Encode(op)
	require.NoError(t, err)
	opClaims, err := jwt.DecodeOperatorClaims(opJWT)
	require.NoError(t, err)
	acc, err := nkeys.CreateAccount()
	require.NoError(t, err)
	accPub, err := acc.PublicKey()
	require.NoError(t, err)
	accJWT, err := jwt.NewAccountClaims(accPub).Encode(op)
	require.NoError(t, err)
	creds := func(signer nkeys.KeyPair) string {
		u, err := nkeys.CreateUser()
		require.NoError(t, err)
		uPub, err := u.PublicKey()
		require.NoError(t, err)
		uc := jwt.NewUserClaims(uPub)
		uc.IssuerAccount = accPub
		uJWT, err := uc.Encode(signer)
		require.NoError(t, err)
		seed, err := u.Seed()
		require.NoError(t, err)
		b, err := jwt.FormatUserConfig(uJWT, seed)
		require.NoError(t, err)
		return writeFile(t, "user.creds", string(b))
	}
	resolver := &server.MemAccResolver{}
	require.NoError(t, resolver.Store(accPub, accJWT))
	srv, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: t.TempDir(), Configure: func(o *server.Options) {
		o.JetStream = false // the account JWT grants none; connecting is what is tested
		o.TrustedOperators = []*jwt.OperatorClaims{opClaims}
		o.AccountResolver = resolver
	}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)

	nc, err := queue.Dial(queue.ConnConfig{URL: srv.URL(), CredsFile: creds(acc)})
	require.NoError(t, err)
	nc.Close()

	// A user signed by an account the operator does not know.
	rogue, err := nkeys.CreateAccount()
	require.NoError(t, err)
	_, err = queue.Dial(queue.ConnConfig{URL: srv.URL(), CredsFile: creds(rogue)})
	require.Error(t, err)
	require.ErrorContains(t, err, "the server refused the credentials")
	_, err = queue.Dial(queue.ConnConfig{URL: srv.URL(), CredsFile: filepath.Join(t.TempDir(), "none.creds")})
	require.ErrorContains(t, err, "NATS creds file")
}

// The embedded server is the one linked in: new enough.
func TestDialAcceptsCurrentServer(t *testing.T) {
	t.Parallel()
	srv, err := queue.StartEmbedded(queue.EmbeddedConfig{StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, err := queue.Dial(queue.ConnConfig{URL: srv.URL()})
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, queue.CheckServerVersion(nc.ConnectedServerVersion()))
	require.Equal(t, server.VERSION, nc.ConnectedServerVersion())
}

// TestExternalServerVersionGate runs a nats-server binary (by default the
// one on PATH, e.g. Debian's 2.9 package; $C2_TEST_NATS_SERVER names
// another) and checks the gate against what that server really does: one
// older than MinServerVersion is refused by Dial, naming both versions,
// and (connected past the check) ignores a Slot's termination with a
// reason, so the bad task runs out of deliveries instead of becoming a
// terminated dead letter at once; a new enough one is accepted and
// terminates it.
func TestExternalServerVersionGate(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("C2_TEST_NATS_SERVER")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("nats-server"); err != nil {
			t.Skip("no nats-server binary on PATH (Debian: apt-get install nats-server) and $C2_TEST_NATS_SERVER unset")
		}
	}
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	ver := strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "nats-server:")), "v")
	url := startExternal(t, bin)

	nc, dialErr := queue.Dial(queue.ConnConfig{URL: url, Name: t.Name()})
	tooOld := queue.CheckServerVersion(ver) != nil
	if tooOld {
		require.ErrorIs(t, dialErr, queue.ErrServerTooOld)
		require.ErrorContains(t, dialErr, "nats-server "+ver+";")
		require.ErrorContains(t, dialErr, queue.MinServerVersion)
		// Past the gate, what the gate prevents.
		nc, err = nats.Connect(url)
		require.NoError(t, err)
	} else {
		require.NoError(t, dialErr)
	}
	t.Cleanup(nc.Close)
	require.Equal(t, ver, nc.ConnectedServerVersion())

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	q, err := queue.Open(ctx, nc, queue.Config{AckWait: 300 * time.Millisecond, MaxDeliver: 2})
	require.NoError(t, err)
	b := bundle{q: q, nc: nc, ctx: ctx}
	dead := runDeadLetters(t, b)
	_, err = q.Publish(ctx, task("bad", 0, 1, "normal"))
	require.NoError(t, err)
	runSlot(t, b, queue.SlotConfig{Name: "s", Handler: func(context.Context, *queue.Delivery) error {
		return queue.Permanent(errors.New("bad input"))
	}})
	d := recv(t, dead, 30*time.Second)
	if tooOld {
		require.Equal(t, queue.DeadMaxDeliveries, d.Kind, "nats-server %s terminated the task; is MinServerVersion %s too high?", ver, queue.MinServerVersion)
	} else {
		require.Equal(t, queue.DeadTerminated, d.Kind, "nats-server %s ignored the termination; MinServerVersion %s is too low", ver, queue.MinServerVersion)
		require.Equal(t, "bad input: bad input", d.Reason)
	}
	require.Equal(t, "bad", d.JobID)
}

// startExternal runs a nats-server binary with JetStream on a free loopback
// port until the test ends and returns its URL once it accepts clients.
func startExternal(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", t.TempDir())
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("nats-server exited: %v", err)
		default:
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server not accepting within 10s: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval while the server boots
	}
}
