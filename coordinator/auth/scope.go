package auth

import (
	"fmt"
	"strings"
)

// Scope is a set of permissions. Admin implies every other scope and lets
// an identity see and act on every job, not only its own.
type Scope uint8

// The scopes.
const (
	// Submit: Submit and Prove (submit, then wait for the own job).
	Submit Scope = 1 << iota
	// Read: Status, Await, Watch, ListJobs of the own jobs; the web page
	// and /metrics.
	Read
	// Cancel: Cancel of the own jobs.
	Cancel
	// Admin: everything, on every identity's jobs.
	Admin
)

var scopeNames = []struct {
	s    Scope
	name string
}{{Submit, "submit"}, {Read, "read"}, {Cancel, "cancel"}, {Admin, "admin"}}

// ParseScopes parses a comma-separated list of scope names
// ("submit,read,cancel").
func ParseScopes(s string) (Scope, error) {
	var out Scope
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		found := false
		for _, n := range scopeNames {
			if part == n.name {
				out |= n.s
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown scope %q (the scopes are submit, read, cancel and admin)", part)
		}
	}
	return out, nil
}

// Has reports whether s includes every scope of want (admin includes all).
func (s Scope) Has(want Scope) bool {
	if s&Admin != 0 {
		return true
	}
	return s&want == want
}

func (s Scope) String() string {
	var names []string
	for _, n := range scopeNames {
		if s&n.s != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}
