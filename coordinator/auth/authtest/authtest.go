// Package authtest makes what tests of the coordinator's API security
// need: a throwaway certificate authority (crypto/x509, ECDSA P-256)
// issuing server and client certificates as PEM files, and tokens files.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c2cluster/c2cluster/coordinator/auth"
)

// CA is a test certificate authority.
type CA struct {
	// File is the CA certificate's PEM file.
	File string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
}

// NewCA writes a fresh CA named cn into a temporary folder of t.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	dir := t.TempDir()
	k := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatalf("authtest: CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("authtest: CA: %v", err)
	}
	ca := &CA{File: filepath.Join(dir, "ca.pem"), cert: cert, key: k, dir: dir}
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost with
// Common Name cn, written to <name>.pem and <name>-key.pem.
func (ca *CA) Server(t testing.TB, name, cn string) (certFile, keyFile string) {
	return ca.issue(t, name, cn, true)
}

// Client issues a client certificate with Common Name cn.
func (ca *CA) Client(t testing.TB, name, cn string) (certFile, keyFile string) {
	return ca.issue(t, name, cn, false)
}

func (ca *CA) issue(t testing.TB, name, cn string, server bool) (string, string) {
	t.Helper()
	k := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
		tmpl.DNSNames = []string{"localhost"}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("authtest: certificate %s: %v", name, err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatalf("authtest: key %s: %v", name, err)
	}
	certFile, keyFile := filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kb)
	return certFile, keyFile
}

// Token is one identity of a tokens file.
type Token struct {
	// Name, Scopes ("submit,read") and Options ("max-open=1") are the
	// line's fields.
	Name, Scopes, Options string
	// Secret is the bearer token; the file holds its hash.
	Secret string
}

// NewToken returns an identity with a fresh random secret.
func NewToken(name, scopes, options string) Token {
	tok, _ := auth.NewToken()
	return Token{Name: name, Scopes: scopes, Options: options, Secret: tok}
}

// WriteTokens writes a tokens file of toks at path.
func WriteTokens(t testing.TB, path string, toks ...Token) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# name scopes credential options\n")
	for _, tk := range toks {
		b.WriteString(tk.Name + " " + tk.Scopes + " " + auth.HashCredential(tk.Secret) + " " + tk.Options + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("authtest: key: %v", err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatalf("authtest: serial: %v", err)
	}
	return n
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("authtest: %v", err)
	}
}

// ServeTLS serves h with cfg on a loopback port, HTTP/1.1 and HTTP/2 (as
// coordinator serve does), until the test ends, and returns its https://
// URL. Unlike httptest, it adds no certificate of its own.
func ServeTLS(t testing.TB, h http.Handler, cfg *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	s := &http.Server{Handler: h, TLSConfig: cfg, Protocols: p, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.ServeTLS(ln, "", "")
	}()
	t.Cleanup(func() {
		_ = s.Close()
		<-done
	})
	return "https://" + ln.Addr().String()
}

// AppendToken adds an identity to the tokens file at path and moves its
// modification time forward (see Touch).
func AppendToken(t testing.TB, path string, tk Token) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(tk.Name + " " + tk.Scopes + " " + auth.HashCredential(tk.Secret) + " " + tk.Options + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	Touch(t, path)
}

// Touch moves a file's modification time a second forward: a rewrite
// within the file system's timestamp granularity is still seen as a
// change.
func Touch(t testing.TB, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	next := st.ModTime().Add(time.Second)
	if err := os.Chtimes(path, next, next); err != nil {
		t.Fatal(err)
	}
}
