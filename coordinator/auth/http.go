package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"connectrpc.com/connect"
)

// Errors of authentication. None of them holds a token.
var (
	ErrNoCredentials = errors.New("no credentials: send the header Authorization: Bearer <token>, or a client certificate")
	ErrBadToken      = errors.New("the bearer token is not in the coordinator's tokens file")
	ErrNotBearer     = errors.New("the Authorization header is not a bearer token (want Authorization: Bearer <token>)")
	ErrUnknownCert   = errors.New("the client certificate's Common Name has no cert: entry in the tokens file")
)

// Authenticator finds the identity of a request: its bearer token, or its
// verified client certificate (a cert: entry of the tokens file, or
// CertScopes).
type Authenticator struct {
	// Tokens is the tokens file; nil: no bearer tokens.
	Tokens *Tokens
	// CertScopes, when not 0, is given to a verified client certificate
	// without a cert: entry (an identity named by its Common Name). 0:
	// such a certificate authenticates nothing.
	CertScopes Scope
}

// Authenticate returns the request's identity.
func (a *Authenticator) Authenticate(r *http.Request) (*Identity, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return nil, ErrNotBearer
		}
		if a.Tokens == nil {
			return nil, ErrBadToken
		}
		if id := a.Tokens.Lookup(strings.TrimSpace(token)); id != nil {
			return id, nil
		}
		return nil, ErrBadToken
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		cn := r.TLS.VerifiedChains[0][0].Subject.CommonName
		if a.Tokens != nil {
			if id := a.Tokens.LookupCert(cn); id != nil {
				return id, nil
			}
		}
		if a.CertScopes != 0 && CheckName(cn) == nil {
			return &Identity{Name: cn, Scopes: a.CertScopes}, nil
		}
		return nil, ErrUnknownCert
	}
	return nil, ErrNoCredentials
}

// Middleware authenticates every request and leaves the outcome in its
// context for RequireHTTP, the Interceptor and FromContext. It refuses
// nothing itself.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := a.Authenticate(r)
		ctx := NewContext(r.Context(), id)
		if err != nil {
			ctx = withError(r.Context(), err)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// WithIdentity gives every request to next the identity id (a listener
// whose clients are trusted as one identity, such as the cuzk API's).
func WithIdentity(id *Identity, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), id)))
	})
}

// Check says whether the request of ctx may use scope: nil, or an error
// of connect code unauthenticated or permission_denied. A context that
// no authentication ran on passes.
func Check(ctx context.Context, scope Scope) error {
	id, err, checked := authResult(ctx)
	if !checked {
		return nil
	}
	if err != nil {
		return connect.NewError(connect.CodeUnauthenticated, err)
	}
	if id == nil {
		return connect.NewError(connect.CodeUnauthenticated, ErrNoCredentials)
	}
	if !id.Has(scope) {
		return connect.NewError(connect.CodePermissionDenied, &ScopeError{Name: id.Name, Want: scope})
	}
	return nil
}

// ScopeError says an identity lacks a scope.
type ScopeError struct {
	Name string
	Want Scope
}

func (e *ScopeError) Error() string {
	return "identity " + e.Name + " lacks the " + e.Want.String() + " scope"
}

// RequireHTTP serves next only to requests with scope; others get 401
// (with WWW-Authenticate: Bearer) or 403 and the reason as text.
func RequireHTTP(scope Scope, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := Check(r.Context(), scope); err != nil {
			var ce *connect.Error
			status := http.StatusForbidden
			if errors.As(err, &ce) && ce.Code() == connect.CodeUnauthenticated {
				status = http.StatusUnauthorized
				w.Header().Set("WWW-Authenticate", `Bearer realm="c2-coordinator"`)
			}
			http.Error(w, ce.Message(), status)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Interceptor refuses a Connect/gRPC call whose identity lacks the scope
// scopeOf names for its procedure (its full name, "/pkg.Service/Method").
// It needs the Middleware (or WithIdentity) in front of the handler.
type Interceptor struct {
	ScopeOf func(procedure string) Scope
}

var _ connect.Interceptor = Interceptor{}

// WrapUnary implements connect.Interceptor.
func (i Interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			return next(ctx, req)
		}
		if err := Check(ctx, i.ScopeOf(req.Spec().Procedure)); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

// WrapStreamingClient implements connect.Interceptor.
func (i Interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler implements connect.Interceptor.
func (i Interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if err := Check(ctx, i.ScopeOf(conn.Spec().Procedure)); err != nil {
			return err
		}
		return next(ctx, conn)
	}
}
