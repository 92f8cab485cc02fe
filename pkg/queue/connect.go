package queue

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/c2cluster/c2cluster/pkg/secret"
)

// MinServerVersion is the oldest nats-server the queue works with. A Slot
// ends a task with bad input by TermWithReason ("+TERM <reason>"); the
// dead-letter stream learns the job and partition from the reason in the
// MSG_TERMINATED advisory. nats-server accepts a reason after +TERM, and
// puts it in the advisory, from 2.10.4 on; older servers (Debian's 2.9
// package among them) ignore the whole acknowledgement, so a bad task is
// redelivered MaxDeliver times, AckWait apart, before it fails its job.
const MinServerVersion = "2.10.4"

// ConnConfig is how a cluster process connects to NATS: the server URLs and
// at most one way to authenticate (user and password, token, nkey seed or
// creds file), plus TLS. Secrets may come from files (PasswordFile,
// TokenFile) so they need be in neither flags nor the environment. The
// YAML keys are the worker's configuration file's (pkg/connflags names the
// matching flags and variables).
type ConnConfig struct {
	// URL is the server URL, or several separated by commas (nats://,
	// tls://). A user and password or token in a URL work too; they are
	// never printed.
	URL string `yaml:"nats"`
	// Name is the connection name the server's monitoring shows.
	Name string `yaml:"-"`

	// User and Password authenticate by user name and password;
	// PasswordFile holds the password instead (trailing newline ignored).
	User         string `yaml:"nats_user"`
	Password     string `yaml:"nats_password"`
	PasswordFile string `yaml:"nats_password_file"`
	// Token authenticates by token; TokenFile holds it instead.
	Token     string `yaml:"nats_token"`
	TokenFile string `yaml:"nats_token_file"`
	// NKeySeedFile holds a user nkey seed (SU…): nkey authentication.
	NKeySeedFile string `yaml:"nats_nkey_seed_file"`
	// CredsFile is a decentralised-auth creds file (user JWT and seed, as
	// nsc writes it).
	CredsFile string `yaml:"nats_creds_file"`

	// CAFile holds the PEM certificates that verify the server (TLS on);
	// empty with a tls:// URL: the system's roots.
	CAFile string `yaml:"nats_ca_file"`
	// CertFile and KeyFile are a client certificate and its key (TLS on),
	// for servers that verify clients.
	CertFile string `yaml:"nats_cert_file"`
	KeyFile  string `yaml:"nats_key_file"`

	// Logger reports reconnects to a server older than MinServerVersion.
	// Default slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

// URLDefault is the NATS URL when none is configured.
const URLDefault = "nats://127.0.0.1:4222"

func (c ConnConfig) authMethods() []string {
	var m []string
	if c.User != "" || c.Password != "" || c.PasswordFile != "" {
		m = append(m, "user/password")
	}
	if c.Token != "" || c.TokenFile != "" {
		m = append(m, "token")
	}
	if c.NKeySeedFile != "" {
		m = append(m, "nkey seed")
	}
	if c.CredsFile != "" {
		m = append(m, "creds file")
	}
	return m
}

// Validate checks that the settings fit together, naming the first that
// does not.
func (c ConnConfig) Validate() error {
	if m := c.authMethods(); len(m) > 1 {
		return fmt.Errorf("%w: NATS: give one way to authenticate, not %s", ErrInvalidConfig, strings.Join(m, " and "))
	}
	if c.Password != "" && c.PasswordFile != "" {
		return fmt.Errorf("%w: NATS: give the password or a password file, not both", ErrInvalidConfig)
	}
	if c.Token != "" && c.TokenFile != "" {
		return fmt.Errorf("%w: NATS: give the token or a token file, not both", ErrInvalidConfig)
	}
	if (c.Password != "" || c.PasswordFile != "") && c.User == "" {
		return fmt.Errorf("%w: NATS: a password needs a user", ErrInvalidConfig)
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return fmt.Errorf("%w: NATS: a client certificate needs both the certificate and the key file", ErrInvalidConfig)
	}
	for _, s := range secret.SplitList(c.urlOrDefault()) {
		if _, err := url.Parse(s); err != nil {
			return fmt.Errorf("%w: NATS URL %s: not a URL", ErrInvalidConfig, secret.RedactURL(s))
		}
	}
	return nil
}

func (c ConnConfig) urlOrDefault() string {
	if c.URL == "" {
		return URLDefault
	}
	return c.URL
}

// options turns the settings into nats.go options, reading the secret
// files.
func (c ConnConfig) options() ([]nats.Option, error) {
	opts := []nats.Option{nats.Name(c.Name), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond)}
	switch {
	case c.User != "":
		pw := c.Password
		if c.PasswordFile != "" {
			s, err := secret.ReadFile("NATS password file", c.PasswordFile)
			if err != nil {
				return nil, err
			}
			pw = s
		}
		opts = append(opts, nats.UserInfo(c.User, pw))
	case c.Token != "" || c.TokenFile != "":
		tok := c.Token
		if c.TokenFile != "" {
			s, err := secret.ReadFile("NATS token file", c.TokenFile)
			if err != nil {
				return nil, err
			}
			tok = s
		}
		opts = append(opts, nats.Token(tok))
	case c.NKeySeedFile != "":
		o, err := nats.NkeyOptionFromSeed(c.NKeySeedFile)
		if err != nil {
			// nats.go's error names the file, never the seed.
			return nil, fmt.Errorf("NATS nkey seed file: %w", err)
		}
		opts = append(opts, o)
	case c.CredsFile != "":
		if _, err := os.Stat(c.CredsFile); err != nil {
			return nil, fmt.Errorf("NATS creds file: %w", err)
		}
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	}
	if c.CAFile != "" {
		opts = append(opts, nats.RootCAs(c.CAFile))
	}
	if c.CertFile != "" {
		opts = append(opts, nats.ClientCert(c.CertFile, c.KeyFile))
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	opts = append(opts, nats.ReconnectHandler(func(nc *nats.Conn) {
		// A server of a cluster may be older than the one first checked.
		if err := CheckServerVersion(nc.ConnectedServerVersion()); err != nil {
			log.Error("queue: reconnected to a NATS server that is too old; bad tasks will be retried instead of failed",
				slog.String("server", nc.ConnectedUrlRedacted()), slog.Any("err", err))
		}
	}))
	return opts, nil
}

// Dial connects to NATS with c's settings, for a long-lived cluster
// process (unlimited reconnects), and refuses a server older than
// MinServerVersion. Errors name the server with any secret in its URL
// redacted.
func Dial(c ConnConfig) (*nats.Conn, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	where := secret.RedactURL(c.urlOrDefault())
	opts, err := c.options()
	if err != nil {
		return nil, fmt.Errorf("queue: connect %s: %w", where, err)
	}
	nc, err := nats.Connect(c.urlOrDefault(), opts...)
	if err != nil {
		return nil, fmt.Errorf("queue: connect %s: %w%s", where, err, connectHint(err))
	}
	if err := CheckServerVersion(nc.ConnectedServerVersion()); err != nil {
		nc.Close()
		return nil, fmt.Errorf("queue: NATS server %s: %w", nc.ConnectedUrlRedacted(), err)
	}
	return nc, nil
}

// Connect dials url with no credentials beyond what the URL carries: Dial
// with ConnConfig{URL: url, Name: name}.
func Connect(url, name string) (*nats.Conn, error) {
	return Dial(ConnConfig{URL: url, Name: name})
}

// connectHint explains nats.go's terser errors.
func connectHint(err error) string {
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return " (the server refused the credentials: check the NATS user and password, token, nkey or creds file)"
	case strings.Contains(err.Error(), "x509:") || strings.Contains(err.Error(), "tls:"):
		return " (TLS: check the NATS CA file, the client certificate and the server's certificate)"
	case errors.Is(err, nats.ErrSecureConnRequired):
		return " (use a tls:// URL or a CA file)"
	}
	return ""
}

// ErrServerTooOld is returned (wrapped, naming both versions) for a server
// older than MinServerVersion.
var ErrServerTooOld = errors.New("nats-server too old")

// CheckServerVersion refuses a server version older than MinServerVersion,
// or one that cannot be read, naming both versions.
func CheckServerVersion(v string) error {
	have, ok := parseVersion(v)
	if !ok {
		return fmt.Errorf("%w: cannot read the server's version %q; c2cluster needs nats-server %s or newer", ErrServerTooOld, v, MinServerVersion)
	}
	need, _ := parseVersion(MinServerVersion)
	if compareVersions(have, need) < 0 {
		return fmt.Errorf("%w: the server is nats-server %s; c2cluster needs %s or newer (older servers ignore a task's termination with a reason, so bad input is retried until it runs out of deliveries): upgrade NATS", ErrServerTooOld, v, MinServerVersion)
	}
	return nil
}

// version is a parsed semantic version: major, minor, patch and whether it
// has a pre-release suffix (2.11.0-RC.1 comes before 2.11.0).
type version struct {
	n   [3]int
	pre string
}

func parseVersion(s string) (version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i] // build metadata does not order
	}
	var v version
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s, v.pre = s[:i], s[i+1:]
		if v.pre == "" {
			return version{}, false
		}
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return version{}, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (len(p) > 1 && p[0] == '0') {
			return version{}, false
		}
		v.n[i] = n
	}
	return v, true
}

// compareVersions orders by number, then a pre-release before its release
// (pre-releases among themselves by their text: enough to say that every
// pre-release of MinServerVersion is too old).
func compareVersions(a, b version) int {
	for i := range a.n {
		if a.n[i] != b.n[i] {
			if a.n[i] < b.n[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	return strings.Compare(a.pre, b.pre)
}
