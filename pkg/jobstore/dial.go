package jobstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
)

// Dial connects to the Redis at addr with OpenTelemetry client spans,
// checks that it answers, and returns a Store on it. Close closes the
// client; the binaries use this, tests build clients themselves.
func Dial(ctx context.Context, addr string, cfg Config) (*Store, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	if err := redisotel.InstrumentTracing(rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis tracing: %w", err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis %s: %w", addr, err)
	}
	s, err := New(rdb, cfg)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	s.closer = rdb
	return s, nil
}

// Close closes the Redis client that Dial opened; a Store made by New does
// not own its client, and Close leaves it open.
func (s *Store) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}
