package jobstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ownerOpenKey is the sorted set of an owner's jobs that were open when
// last looked at (score: creation time in ms). OpenJobs prunes it.
func (s *Store) ownerOpenKey(owner string) string { return s.cfg.Prefix + ":owner:" + owner + ":open" }

// indexOwner adds a new job to its owner's open set (no owner: nothing).
func (s *Store) indexOwner(ctx context.Context, pipe redis.Pipeliner, j NewJob, nowMs int64) {
	if j.Owner == "" {
		return
	}
	pipe.ZAdd(ctx, s.ownerOpenKey(j.Owner), redis.Z{Score: float64(nowMs), Member: j.ID})
	pipe.PExpire(ctx, s.ownerOpenKey(j.Owner), s.cfg.JobTTL)
}

// ListOwned is List of the jobs whose Owner is owner.
func (s *Store) ListOwned(ctx context.Context, owner string, state State, limit int) ([]*Job, error) {
	return s.list(ctx, limit, func(j *Job) bool { return j.Owner == owner && (state == "" || j.State == state) })
}

// OpenJobs counts owner's jobs that are not terminal (queued, proving or
// assembling), dropping finished and expired ones from its open set.
// Concurrent submissions of one owner may each count the others' jobs as
// not yet there: a quota checked with it may be exceeded by the number of
// submissions in flight.
func (s *Store) OpenJobs(ctx context.Context, owner string) (int, error) {
	if owner == "" {
		return 0, errors.New("jobstore: OpenJobs needs an owner")
	}
	key := s.ownerOpenKey(owner)
	ids, err := s.rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("jobstore: open jobs of %s: %w", owner, err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGet(ctx, s.key(id, "job"), "state")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("jobstore: open jobs of %s: %w", owner, err)
	}
	open := 0
	var closed []any
	for i, c := range cmds {
		st, err := c.Result()
		if errors.Is(err, redis.Nil) || (err == nil && State(st).Terminal()) {
			closed = append(closed, ids[i])
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("jobstore: open jobs of %s: %w", owner, err)
		}
		open++
	}
	if len(closed) > 0 {
		if err := s.rdb.ZRem(ctx, key, closed...).Err(); err != nil {
			return 0, fmt.Errorf("jobstore: open jobs of %s: %w", owner, err)
		}
	}
	return open, nil
}
