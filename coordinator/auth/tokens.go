package auth

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CheckEveryDefault is how often Tokens looks at its file's modification
// time (on the next request after the interval).
const CheckEveryDefault = 2 * time.Second

// TokenPrefix starts every token NewToken makes; a token is any string,
// this only makes one recognisable in a secret store.
const TokenPrefix = "c2t_"

// Tokens is the tokens file: one line per identity,
//
//	# name   scopes              credential         options
//	alice    submit,read,cancel  sha256:<64 hex>    rate=1/s burst=10 max-open=20
//	ops      admin               sha256:<64 hex>
//	curio    submit,read,cancel  cert:curio.example.org
//
// name is the identity (and the owner of its jobs): 1 to 64 characters of
// [A-Za-z0-9._-]. scopes are comma-separated submit, read, cancel, admin.
// The credential is sha256: and the hex SHA-256 of the bearer token (the
// file never holds a token), or cert: and the Common Name of a client
// certificate the TLS client CA verified. Options override the server's
// defaults: rate= submissions per second (a number, or N/s, N/m, N/h),
// burst= submissions at once, max-open= open jobs. Blank lines and lines
// starting with # are ignored.
//
// The file is read at start, re-read when its modification time or size
// changes (noticed on a request at most CheckEvery after the change) and
// on Reload. A file that fails to parse leaves the previous entries in
// force; the error names the line.
type Tokens struct {
	path string
	log  *slog.Logger
	// CheckEvery is how often the file's modification time is looked at.
	CheckEvery time.Duration

	mu        sync.RWMutex
	entries   []entry
	stamp     fileStamp
	lastCheck time.Time
}

type entry struct {
	id   *Identity
	hash []byte // SHA-256 of the token; nil for a cert: entry
	cn   string // client certificate Common Name; "" for a sha256: entry
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// LoadTokens reads the tokens file at path.
func LoadTokens(path string, log *slog.Logger) (*Tokens, error) {
	if log == nil {
		log = slog.Default()
	}
	t := &Tokens{path: path, log: log, CheckEvery: CheckEveryDefault}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Path is the file's path.
func (t *Tokens) Path() string { return t.path }

// Len is the number of entries in force.
func (t *Tokens) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.entries)
}

// Reload re-reads the file. On an error the entries in force stay.
func (t *Tokens) Reload() error {
	st, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("auth: tokens file: %w", err)
	}
	data, err := os.ReadFile(t.path)
	if err != nil {
		return fmt.Errorf("auth: tokens file: %w", err)
	}
	entries, err := parseTokens(data)
	if err != nil {
		return fmt.Errorf("auth: tokens file %s: %w", t.path, err)
	}
	t.mu.Lock()
	t.entries = entries
	t.stamp = fileStamp{mod: st.ModTime(), size: st.Size()}
	t.lastCheck = time.Now()
	t.mu.Unlock()
	t.log.Info("auth: tokens file loaded", slog.String("file", t.path), slog.Int("identities", len(entries)))
	return nil
}

// check re-reads the file when CheckEvery has passed since the last look
// and its modification time or size changed.
func (t *Tokens) check() {
	t.mu.Lock()
	if time.Since(t.lastCheck) < t.CheckEvery {
		t.mu.Unlock()
		return
	}
	t.lastCheck = time.Now()
	old := t.stamp
	t.mu.Unlock()
	st, err := os.Stat(t.path)
	if err != nil {
		t.log.Error("auth: tokens file unreadable; the loaded tokens stay in force", slog.String("file", t.path), slog.Any("err", err))
		return
	}
	if st.ModTime().Equal(old.mod) && st.Size() == old.size {
		return
	}
	if err := t.Reload(); err != nil {
		t.log.Error("auth: tokens file changed but does not parse; the loaded tokens stay in force", slog.Any("err", err))
		// Do not retry a broken file on every request: wait for its next change.
		t.mu.Lock()
		t.stamp = fileStamp{mod: st.ModTime(), size: st.Size()}
		t.mu.Unlock()
	}
}

// Lookup returns the identity of a bearer token, or nil. Every entry's
// hash is compared in constant time.
func (t *Tokens) Lookup(token string) *Identity {
	t.check()
	sum := sha256.Sum256([]byte(token))
	t.mu.RLock()
	defer t.mu.RUnlock()
	var found *Identity
	for _, e := range t.entries {
		if e.hash != nil && subtle.ConstantTimeCompare(e.hash, sum[:]) == 1 {
			found = e.id
		}
	}
	return found
}

// LookupCert returns the identity of a verified client certificate's
// Common Name, or nil.
func (t *Tokens) LookupCert(cn string) *Identity {
	t.check()
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, e := range t.entries {
		if e.cn != "" && e.cn == cn {
			return e.id
		}
	}
	return nil
}

func parseTokens(data []byte) ([]entry, error) {
	var out []entry
	names := map[string]int{}
	hashes := map[string]int{}
	cns := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseTokenLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if prev, dup := names[e.id.Name]; dup {
			return nil, fmt.Errorf("line %d: name %q is also on line %d", n, e.id.Name, prev)
		}
		names[e.id.Name] = n
		if e.hash != nil {
			h := string(e.hash)
			if prev, dup := hashes[h]; dup {
				return nil, fmt.Errorf("line %d: the same token hash is on line %d", n, prev)
			}
			hashes[h] = n
		} else {
			if prev, dup := cns[e.cn]; dup {
				return nil, fmt.Errorf("line %d: cert:%s is also on line %d", n, e.cn, prev)
			}
			cns[e.cn] = n
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseTokenLine(line string) (entry, error) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return entry{}, errors.New("want: name scopes sha256:<hex>|cert:<common name> [rate=… burst=… max-open=…]")
	}
	if err := CheckName(f[0]); err != nil {
		return entry{}, err
	}
	scopes, err := ParseScopes(f[1])
	if err != nil {
		return entry{}, err
	}
	e := entry{id: &Identity{Name: f[0], Scopes: scopes}}
	switch cred := f[2]; {
	case strings.HasPrefix(cred, "sha256:"):
		h, err := hex.DecodeString(strings.TrimPrefix(cred, "sha256:"))
		if err != nil || len(h) != sha256.Size {
			return entry{}, errors.New("the credential sha256:… must be 64 hex digits (the SHA-256 of the token)")
		}
		e.hash = h
	case strings.HasPrefix(cred, "cert:") && len(cred) > len("cert:"):
		e.cn = strings.TrimPrefix(cred, "cert:")
	default:
		return entry{}, errors.New("the credential (third field) must be sha256:<64 hex> or cert:<common name>; the file holds a token's hash, never the token")
	}
	for _, opt := range f[3:] {
		k, v, ok := strings.Cut(opt, "=")
		if !ok {
			return entry{}, fmt.Errorf("option %q is not key=value", opt)
		}
		switch k {
		case "rate":
			r, err := ParseRate(v)
			if err != nil {
				return entry{}, err
			}
			e.id.Limits.SubmitRate = r
		case "burst", "max-open":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return entry{}, fmt.Errorf("%s=%s: want a whole number ≥ 1", k, v)
			}
			if k == "burst" {
				e.id.Limits.SubmitBurst = n
			} else {
				e.id.Limits.MaxOpen = n
			}
		default:
			return entry{}, fmt.Errorf("unknown option %q (the options are rate=, burst= and max-open=)", k)
		}
	}
	return e, nil
}

// CheckName checks an identity name: 1 to 64 characters of [A-Za-z0-9._-].
func CheckName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("name %q must have 1..64 characters", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("name %q has a character outside [A-Za-z0-9._-]", name)
		}
	}
	return nil
}

// ParseRate parses a submission rate: a number per second, or N/s, N/m,
// N/h. "0" is unlimited.
func ParseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(s, "/")
	r, err := strconv.ParseFloat(num, 64)
	if err != nil || r < 0 {
		return 0, fmt.Errorf("rate %q: want a number of submissions per second, or N/s, N/m, N/h", s)
	}
	switch unit {
	case "", "s":
	case "m":
		r /= 60
	case "h":
		r /= 3600
	default:
		return 0, fmt.Errorf("rate %q: the unit after / must be s, m or h", s)
	}
	return r, nil
}

// NewToken returns a fresh random bearer token and the sha256: credential
// of it for the tokens file.
func NewToken() (token, credential string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = TokenPrefix + hex.EncodeToString(b)
	return token, HashCredential(token)
}

// HashCredential is the tokens file's credential of a token:
// "sha256:" and the hex SHA-256 of its bytes.
func HashCredential(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ParseTokensLine parses one line of a tokens file.
func ParseTokensLine(line string) (*Identity, error) {
	e, err := parseTokenLine(strings.TrimSpace(line))
	if err != nil {
		return nil, err
	}
	return e.id, nil
}
