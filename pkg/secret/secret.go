// Package secret keeps credentials out of logs and errors: RedactURL makes a
// NATS or Redis URL fit to print, ReadFile reads a password or token from a
// file (so it need be in neither flags nor the environment).
package secret

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// RedactURL returns a NATS or Redis URL (or a comma-separated list of
// them) fit to print: a password becomes "xxxxx" (url.URL.Redacted), and so
// does a user with no password, which NATS takes for a token. Text that is
// not a URL with credentials comes back unchanged, except that anything
// before an '@' is redacted.
func RedactURL(s string) string {
	parts := SplitList(s)
	for i, p := range parts {
		parts[i] = redactOne(p)
	}
	return strings.Join(parts, ",")
}

func redactOne(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		// Not a URL url.Parse reads; do not risk printing a secret.
		if i := strings.LastIndexByte(s, '@'); i >= 0 {
			return "xxxxx" + s[i:]
		}
		return s
	}
	if u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		if u.User.Username() == "" {
			return s
		}
		u.User = url.User("xxxxx")
		return u.String()
	}
	return u.Redacted()
}

// SplitList splits a comma-separated list, trimming spaces.
func SplitList(s string) []string {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// ReadFile reads a secret (a password or token) from a file, without
// its trailing newline; what names the setting in errors. An empty file is
// an error: an empty secret is almost always a mistake.
func ReadFile(what, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("%s %s is empty", what, path)
	}
	return s, nil
}
