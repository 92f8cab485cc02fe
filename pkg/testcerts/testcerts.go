// Package testcerts makes a throwaway certificate authority for tests of
// TLS connections to NATS and Redis: a CA, a server certificate for
// 127.0.0.1 and localhost, and a client certificate, all PEM files in a
// temporary folder (crypto/x509, ECDSA P-256, valid for a day).
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Set is one CA's files.
type Set struct {
	// CAFile is the CA certificate: what clients and servers trust.
	CAFile string
	// ServerCert and ServerKey are for 127.0.0.1, ::1 and localhost.
	ServerCert, ServerKey string
	// ClientCert and ClientKey are a client certificate (CN "c2-client").
	ClientCert, ClientKey string
}

// New writes a fresh CA with a server and a client certificate into a
// temporary folder of t.
func New(t testing.TB) *Set {
	t.Helper()
	dir := t.TempDir()
	caKey := key(t)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "c2cluster test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("testcerts: CA: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("testcerts: CA: %v", err)
	}
	s := &Set{CAFile: filepath.Join(dir, "ca.pem")}
	writePEM(t, s.CAFile, "CERTIFICATE", caDER)
	leaf := func(name string, usage x509.ExtKeyUsage, server bool) (string, string) {
		k := key(t)
		tmpl := &x509.Certificate{
			SerialNumber: serial(t),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatalf("testcerts: %s: %v", name, err)
		}
		kb, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatalf("testcerts: %s key: %v", name, err)
		}
		cert, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		writePEM(t, cert, "CERTIFICATE", der)
		writePEM(t, keyFile, "PRIVATE KEY", kb)
		return cert, keyFile
	}
	s.ServerCert, s.ServerKey = leaf("c2-server", x509.ExtKeyUsageServerAuth, true)
	s.ClientCert, s.ClientKey = leaf("c2-client", x509.ExtKeyUsageClientAuth, false)
	return s
}

func key(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testcerts: key: %v", err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatalf("testcerts: serial: %v", err)
	}
	return n
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("testcerts: %v", err)
	}
}
