// Package auth is the coordinator API's security: identities and their
// scopes, the tokens file (hashes of bearer tokens, reloaded when it
// changes), TLS with certificates reloaded from disk and optional client
// certificates, the HTTP middleware and Connect interceptor that
// authenticate and authorize requests, per-identity submit rate limits,
// and the rule that an open (unauthenticated) listener must be on a
// loopback address unless the operator says -insecure.
//
// The coordinator's server package asks this package who a request is
// (FromContext) and whether it may do something (Identity.Has); it never
// sees a token.
package auth
