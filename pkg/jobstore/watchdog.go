package jobstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// PartitionSeqs returns the stream sequence of each partition's task as
// last recorded (SetPublished).
func (s *Store) PartitionSeqs(ctx context.Context, job string) (map[uint32]uint64, error) {
	if err := checkID(job); err != nil {
		return nil, err
	}
	m, err := s.rdb.HGetAll(ctx, s.key(job, "seqs")).Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: seqs of %s: %w", job, err)
	}
	out := make(map[uint32]uint64, len(m))
	for k, v := range m {
		p, err1 := strconv.ParseUint(k, 10, 32)
		seq, err2 := strconv.ParseUint(v, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("jobstore: seqs of %s: bad entry %q=%q", job, k, v)
		}
		out[uint32(p)] = seq
	}
	return out, nil
}

// PrepareRepublish readies a partition whose task was lost for a new task:
// unless the job is closed or the partition has its proof, it forgets the
// partition's attempts (the new task's deliveries count from 1 again) and
// records a "republish" event with why. It reports whether the partition
// is to be published again.
func (s *Store) PrepareRepublish(ctx context.Context, job string, partition uint32, why string) (bool, error) {
	if err := checkID(job); err != nil {
		return false, err
	}
	n, err := republishScript.Run(ctx, s.rdb,
		[]string{s.key(job, "job"), s.key(job, "attempts"), s.key(job, "proofs"), s.key(job, "events")},
		partition, why, s.nowMs(), s.ttlMs(), s.Channel(job)).Int()
	if err != nil {
		return false, fmt.Errorf("jobstore: republish %s.%d: %w", job, partition, err)
	}
	return n == 1, nil
}

// republishScript: KEYS job, attempts, proofs, events.
// ARGV partition, why, now_ms, ttl_ms, channel.
var republishScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'cancelled' or state == 'failed' or state == 'done' then return 0 end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'updated_ms', ARGV[3])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', '512', '*', 'type', 'republish', 'partition', ARGV[1], 'reason', ARGV[2])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
redis.call('PUBLISH', ARGV[5], 'republish')
return 1
`)

// Lease takes or renews the lease name for holder for ttl: true while
// holder has it (it took it, or it was already its own and is renewed),
// false while another holder's lease runs. Coordinators use it so that one
// of them at a time runs a periodic task.
func (s *Store) Lease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	n, err := leaseScript.Run(ctx, s.rdb, []string{s.cfg.Prefix + ":lease:" + name}, holder, ttl.Milliseconds()).Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("jobstore: lease %s: %w", name, err)
	}
	return n == 1, nil
}

var leaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not cur then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
`)

// redisLog hands go-redis's own log lines (a failed dial, once per
// attempt while Redis is down) to slog at debug level: the processes
// report an outage of Redis themselves, once.
type redisLog struct{}

func (redisLog) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}

var quietOnce sync.Once

// QuietClientLog sends go-redis's own log lines (process-wide) to slog at
// debug level instead of stderr.
func QuietClientLog() { quietOnce.Do(func() { redis.SetLogger(redisLog{}) }) }
