package queue

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedConfig configures an in-process NATS server with JetStream.
type EmbeddedConfig struct {
	// StoreDir holds JetStream's file storage. Required.
	StoreDir string
	// Host to listen on. Default 127.0.0.1.
	Host string
	// Port to listen on; 0 picks a free port. Default 0.
	Port int
	// ReadyTimeout bounds the wait for the server to accept clients.
	// Default 10 s.
	ReadyTimeout time.Duration
	// Configure, when set, adjusts the server's options before it starts
	// (tests: TLS, users, nkeys).
	Configure func(*server.Options)
}

// Embedded is a running in-process NATS server (the single-node default and
// tests).
type Embedded struct {
	Server *server.Server
}

// StartEmbedded starts an in-process NATS server with JetStream on disk and
// waits until it accepts connections.
func StartEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
	if cfg.StoreDir == "" {
		return nil, fmt.Errorf("%w: EmbeddedConfig.StoreDir is required", ErrInvalidConfig)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	port := cfg.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	opts := &server.Options{
		ServerName: "c2-embedded",
		Host:       cfg.Host,
		Port:       port,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		NoSigs:     true,
		NoLog:      true,
	}
	if cfg.Configure != nil {
		cfg.Configure(opts)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("queue: embedded nats-server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(cfg.ReadyTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("queue: embedded nats-server not ready within %v", cfg.ReadyTimeout)
	}
	return &Embedded{Server: ns}, nil
}

// URL is the client URL of the server.
func (e *Embedded) URL() string { return e.Server.ClientURL() }

// Shutdown stops the server and waits for it.
func (e *Embedded) Shutdown() {
	e.Server.Shutdown()
	e.Server.WaitForShutdown()
}
