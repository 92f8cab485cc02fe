package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	"github.com/c2cluster/c2cluster/coordinator/auth"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/proto/c2cluster/v1/c2clusterv1connect"
)

// procedureScopes is the scope each ProofService procedure needs; a
// procedure not listed needs admin.
var procedureScopes = map[string]auth.Scope{
	c2clusterv1connect.ProofServiceSubmitProcedure:   auth.Submit,
	c2clusterv1connect.ProofServiceProveProcedure:    auth.Submit | auth.Read,
	c2clusterv1connect.ProofServiceAwaitProcedure:    auth.Read,
	c2clusterv1connect.ProofServiceWatchProcedure:    auth.Read,
	c2clusterv1connect.ProofServiceStatusProcedure:   auth.Read,
	c2clusterv1connect.ProofServiceListJobsProcedure: auth.Read,
	c2clusterv1connect.ProofServiceVerifyProcedure:   auth.Read,
	c2clusterv1connect.ProofServiceCancelProcedure:   auth.Cancel,
}

// ProcedureScope is the scope a ProofService procedure needs.
func ProcedureScope(procedure string) auth.Scope {
	if s, ok := procedureScopes[procedure]; ok {
		return s
	}
	return auth.Admin
}

// authInterceptor checks each call's scope. Where no authentication ran
// (Config.Auth nil, or a call from inside the process) it lets every call
// through.
func authInterceptor() connect.Option {
	return connect.WithInterceptors(auth.Interceptor{ScopeOf: ProcedureScope})
}

// Protect returns h (the Mux, with anything else registered on it) behind
// the API's authentication: /healthz stays open for probes, the
// ProofService checks each procedure's scope, and every other path
// (/metrics, the web page) needs the read scope. With Config.Auth nil it
// returns h.
func (s *Server) Protect(h http.Handler) http.Handler {
	if s.cfg.Auth == nil {
		return h
	}
	api, _ := s.Handler()
	read := auth.RequireHTTP(auth.Read, h)
	return s.cfg.Auth.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz":
			h.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, api):
			h.ServeHTTP(w, r)
		default:
			read.ServeHTTP(w, r)
		}
	}))
}

// caller is the identity of ctx's request, or nil where the caller is not
// restricted (no authentication, or an admin).
func caller(ctx context.Context) *auth.Identity {
	id, ok := auth.FromContext(ctx)
	if !ok || id == nil || id.Admin() {
		return nil
	}
	return id
}

// owner is the owner to record on a job ctx's request submits.
func owner(ctx context.Context) string {
	if id, ok := auth.FromContext(ctx); ok && id != nil {
		return id.Name
	}
	return ""
}

// notFound is the error of a job that does not exist, also given for a
// job of another identity (so job ids cannot be probed).
func notFound(jobID string) error {
	return storeError(fmt.Errorf("%w: %s", jobstore.ErrNotFound, jobID))
}

// mayAccess reports whether ctx's caller may see job j.
func mayAccess(ctx context.Context, j *jobstore.Job) bool {
	id := caller(ctx)
	return id == nil || j.Owner == id.Name
}

// checkOwner answers not_found unless ctx's caller may see job jobID.
func (s *Server) checkOwner(ctx context.Context, jobID string) error {
	if caller(ctx) == nil {
		return nil
	}
	j, err := s.store.Get(ctx, jobID)
	if err != nil {
		return storeError(err)
	}
	if !mayAccess(ctx, j) {
		return notFound(jobID)
	}
	return nil
}

// idempotencyKey scopes a submission's idempotency key to its owner: one
// identity's key never names another's job.
func idempotencyKey(ctx context.Context, key string) string {
	if o := owner(ctx); o != "" && key != "" {
		return o + "\x00" + key
	}
	return key
}

// admitSubmit applies ctx's identity's submit rate limit (before any work
// on the submission).
func (s *Server) admitSubmit(ctx context.Context) error {
	id, ok := auth.FromContext(ctx)
	if !ok || id == nil {
		return nil
	}
	if err := s.limiter.Allow(id.Name, id.Limits.Or(s.cfg.Limits)); err != nil {
		s.cfg.Metrics.FailuresTotal.WithLabelValues("submit", "rate_limited").Inc()
		return connect.NewError(connect.CodeResourceExhausted, err)
	}
	return nil
}

// admitJob applies ctx's identity's quota of open jobs (before a new job
// is created).
func (s *Server) admitJob(ctx context.Context) error {
	id, ok := auth.FromContext(ctx)
	if !ok || id == nil {
		return nil
	}
	limit := id.Limits.Or(s.cfg.Limits).MaxOpen
	if limit <= 0 {
		return nil
	}
	n, err := s.store.OpenJobs(ctx, id.Name)
	if err != nil {
		return connect.NewError(connect.CodeUnavailable, err)
	}
	if n >= limit {
		s.cfg.Metrics.FailuresTotal.WithLabelValues("submit", "quota").Inc()
		return connect.NewError(connect.CodeResourceExhausted,
			fmt.Errorf("identity %s has %d open jobs (queued, proving or assembling), its limit max-open is %d: wait for one to finish or cancel one", id.Name, n, limit))
	}
	return nil
}
