package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/tlsfiles"
)

// TLSFiles name a listener's TLS material.
type TLSFiles struct {
	// Cert and Key are PEM files of the server's certificate (chain) and
	// key; re-read when either changes on disk.
	Cert, Key string
	// ClientCA is a PEM file of the CAs client certificates must chain to;
	// "" asks for no client certificate.
	ClientCA string
	// RequireClientCert refuses a connection without a verified client
	// certificate (otherwise one is verified when given).
	RequireClientCert bool
}

// CertReloader serves a certificate and key from files and re-reads them
// when either file's modification time or size changes (looked at, on a
// handshake, at most every CheckEvery). A pair that fails to load leaves
// the previous one in use.
type CertReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	// CheckEvery is how often the files' modification times are looked at.
	CheckEvery time.Duration

	mu        sync.Mutex
	cert      *tls.Certificate
	stamps    [2]fileStamp
	lastCheck time.Time
}

// NewCertReloader loads the pair; an error names the file.
func NewCertReloader(certFile, keyFile string, log *slog.Logger) (*CertReloader, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("auth: TLS needs both a certificate file and a key file")
	}
	if log == nil {
		log = slog.Default()
	}
	r := &CertReloader{certFile: certFile, keyFile: keyFile, log: log, CheckEvery: CheckEveryDefault}
	stamps, err := r.stat()
	if err != nil {
		return nil, err
	}
	if err := r.load(stamps); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *CertReloader) stat() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, f := range []string{r.certFile, r.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return out, fmt.Errorf("auth: TLS: %w", err)
		}
		out[i] = fileStamp{mod: st.ModTime(), size: st.Size()}
	}
	return out, nil
}

func (r *CertReloader) load(stamps [2]fileStamp) error {
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("auth: TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.mu.Lock()
	r.cert, r.stamps, r.lastCheck = &c, stamps, time.Now()
	r.mu.Unlock()
	if c.Leaf != nil {
		r.log.Info("auth: TLS certificate loaded", slog.String("file", r.certFile),
			slog.String("subject", c.Leaf.Subject.String()), slog.Time("not_after", c.Leaf.NotAfter))
	}
	return nil
}

// GetCertificate is tls.Config.GetCertificate.
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	due := time.Since(r.lastCheck) >= r.CheckEvery
	if due {
		r.lastCheck = time.Now()
	}
	old := r.stamps
	r.mu.Unlock()
	if due {
		if stamps, err := r.stat(); err != nil {
			r.log.Error("auth: TLS certificate files unreadable; the loaded certificate stays in use", slog.Any("err", err))
		} else if stamps != old {
			if err := r.load(stamps); err != nil {
				r.log.Error("auth: TLS certificate files changed but do not load; the loaded certificate stays in use", slog.Any("err", err))
				r.mu.Lock()
				r.stamps = stamps // wait for the next change
				r.mu.Unlock()
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert, nil
}

// ServerTLS returns the TLS configuration of a listener (TLS 1.2 or
// newer), with the reloader serving its certificate.
func ServerTLS(files TLSFiles, log *slog.Logger) (*tls.Config, *CertReloader, error) {
	r, err := NewCertReloader(files.Cert, files.Key, log)
	if err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if files.ClientCA != "" {
		pool, err := LoadCAs(files.ClientCA)
		if err != nil {
			return nil, nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		if files.RequireClientCert {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
	} else if files.RequireClientCert {
		return nil, nil, errors.New("auth: requiring client certificates needs a client CA file")
	}
	return cfg, r, nil
}

// LoadCAs reads a PEM file of CA certificates.
func LoadCAs(file string) (*x509.CertPool, error) {
	pool, err := tlsfiles.CAPool(file)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return pool, nil
}
