// Package tlsfiles reads TLS material an operator names by file: the pool
// of CA certificates that the API's server (client certificates), its
// clients and the Redis connections verify their peers against. Errors
// name the file, never its contents.
package tlsfiles

import (
	"crypto/x509"
	"fmt"
	"os"
)

// CAPool reads a PEM file of CA certificates. A file that holds no PEM
// certificate is an error naming it.
func CAPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", file)
	}
	return pool, nil
}
