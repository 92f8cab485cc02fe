package tlsfiles_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/testcerts"
	"github.com/c2cluster/c2cluster/pkg/tlsfiles"
)

// The pool read from pkg/testcerts' CA verifies the server certificate it
// signed, and another CA's pool does not; a missing file and a file without
// PEM are errors naming the file.
func TestCAPool(t *testing.T) {
	set, other := testcerts.New(t), testcerts.New(t)
	leaf, err := tls.LoadX509KeyPair(set.ServerCert, set.ServerKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(leaf.Certificate[0])
	require.NoError(t, err)

	pool, err := tlsfiles.CAPool(set.CAFile)
	require.NoError(t, err)
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"})
	require.NoError(t, err)
	otherPool, err := tlsfiles.CAPool(other.CAFile)
	require.NoError(t, err)
	_, err = cert.Verify(x509.VerifyOptions{Roots: otherPool, DNSName: "localhost"})
	require.Error(t, err)

	dir := t.TempDir()
	_, err = tlsfiles.CAPool(filepath.Join(dir, "absent.pem"))
	require.ErrorContains(t, err, "absent.pem")
	junk := filepath.Join(dir, "junk.pem")
	require.NoError(t, os.WriteFile(junk, []byte("not a certificate"), 0o600))
	_, err = tlsfiles.CAPool(junk)
	require.ErrorContains(t, err, "junk.pem holds no PEM certificate")
}
