package jobstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Binding is what an idempotency key is bound to: a job and the digest of
// the request that made it (empty for a key bound before digests were
// recorded).
type Binding struct {
	JobID, Digest string
}

func (b Binding) value() string { return b.JobID + " " + b.Digest }

func parseBinding(v string) Binding {
	id, digest, _ := strings.Cut(v, " ")
	return Binding{JobID: id, Digest: digest}
}

// ClaimIdempotencyKey binds key to jobID and the request digest unless it
// is bound already (SET NX, with the job TTL). It returns the binding and
// whether this call made it. A caller that finds another binding with its
// own digest resubmits as that job: every later step of a submission is
// idempotent, so it may finish a submission whose coordinator died
// half-way.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, key, jobID, digest string) (Binding, bool, error) {
	if key == "" || len(key) > MaxIdemKeyLen {
		return Binding{}, false, fmt.Errorf("%w: idempotency key must have 1..%d bytes", ErrInvalid, MaxIdemKeyLen)
	}
	if err := checkID(jobID); err != nil {
		return Binding{}, false, err
	}
	want := Binding{JobID: jobID, Digest: digest}
	ok, err := s.rdb.SetNX(ctx, s.idemKey(key), want.value(), s.cfg.JobTTL).Result()
	if err != nil {
		return Binding{}, false, fmt.Errorf("jobstore: claim idempotency key: %w", err)
	}
	if ok {
		return want, true, nil
	}
	got, bound, err := s.IdempotentJob(ctx, key)
	if err != nil {
		return Binding{}, false, err
	}
	if !bound { // expired in between: claim again
		return s.ClaimIdempotencyKey(ctx, key, jobID, digest)
	}
	return got, false, nil
}

// IdempotentJob returns the binding of an idempotency key, if any.
func (s *Store) IdempotentJob(ctx context.Context, key string) (Binding, bool, error) {
	v, err := s.rdb.Get(ctx, s.idemKey(key)).Result()
	if errors.Is(err, redis.Nil) {
		return Binding{}, false, nil
	}
	if err != nil {
		return Binding{}, false, fmt.Errorf("jobstore: read idempotency key: %w", err)
	}
	return parseBinding(v), true, nil
}

// rebindScript: KEYS idem. ARGV old value, new value, ttl_ms. Sets the new
// value if the key still holds the old one; returns the value it holds.
var rebindScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or not v then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return ARGV[2]
end
return v
`)

// RebindIdempotencyKey moves key from the binding old (a job that failed
// or was cancelled) to jobID and digest, if key is still bound to old. It
// returns the binding the key has now and whether this call made it: a
// concurrent resubmission that rebound it first wins, and the caller
// continues as that job (same digest) or is refused (another).
func (s *Store) RebindIdempotencyKey(ctx context.Context, key string, old Binding, jobID, digest string) (Binding, bool, error) {
	if err := checkID(jobID); err != nil {
		return Binding{}, false, err
	}
	want := Binding{JobID: jobID, Digest: digest}
	v, err := rebindScript.Run(ctx, s.rdb, []string{s.idemKey(key)}, old.value(), want.value(), s.ttlMs()).Text()
	if err != nil {
		return Binding{}, false, fmt.Errorf("jobstore: rebind idempotency key: %w", err)
	}
	return parseBinding(v), v == want.value(), nil
}
