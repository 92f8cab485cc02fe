package auth

import (
	"context"
	"fmt"
)

// Limits bound what one identity may put on the cluster. Zero fields
// mean "the default" in a tokens-file entry and "unlimited" once resolved.
type Limits struct {
	// SubmitRate is submissions per second, refilled continuously.
	SubmitRate float64
	// SubmitBurst is how many submissions may come at once.
	SubmitBurst int
	// MaxOpen is how many jobs (queued, proving or assembling) the
	// identity may have at once.
	MaxOpen int
}

// Or fills l's zero fields from def.
func (l Limits) Or(def Limits) Limits {
	if l.SubmitRate == 0 {
		l.SubmitRate = def.SubmitRate
	}
	if l.SubmitBurst == 0 {
		l.SubmitBurst = def.SubmitBurst
	}
	if l.MaxOpen == 0 {
		l.MaxOpen = def.MaxOpen
	}
	return l
}

// Identity is who a request is: a tokens-file entry's name and scopes, or
// the identity a listener gives every request (the cuzk API's).
type Identity struct {
	// Name is the owner recorded on the identity's jobs.
	Name   string
	Scopes Scope
	// Limits are the entry's own (zero fields: the server's defaults).
	Limits Limits
}

// Has reports whether the identity has the scope.
func (id *Identity) Has(s Scope) bool { return id != nil && id.Scopes.Has(s) }

// Admin reports whether the identity sees every job.
func (id *Identity) Admin() bool { return id.Has(Admin) }

func (id *Identity) String() string {
	if id == nil {
		return "anonymous"
	}
	return fmt.Sprintf("%s (%s)", id.Name, id.Scopes)
}

type ctxKey struct{}

// result is what authentication left in a request's context.
type result struct {
	id  *Identity
	err error
}

// NewContext returns ctx carrying id as the request's identity.
func NewContext(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, result{id: id})
}

// withError marks ctx as a request whose authentication failed.
func withError(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, ctxKey{}, result{err: err})
}

// FromContext returns the request's identity. ok is false where nothing
// authenticated the request: authentication is off (or the call is the
// coordinator's own), and the caller is not restricted.
func FromContext(ctx context.Context) (id *Identity, ok bool) {
	r, ok := ctx.Value(ctxKey{}).(result)
	if !ok {
		return nil, false
	}
	return r.id, true
}

// authResult returns what authentication found: the identity, the reason
// it failed, or checked=false where authentication did not run.
func authResult(ctx context.Context) (id *Identity, err error, checked bool) {
	r, ok := ctx.Value(ctxKey{}).(result)
	return r.id, r.err, ok
}
