package jobstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
)

// namedClients counts the Redis connections named name (CLIENT LIST), and
// of them those in pub/sub.
func namedClients(t *testing.T, ctx context.Context, admin *redis.Client, name string) (all, pubsub int) {
	t.Helper()
	list, err := admin.ClientList(ctx).Result()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if !strings.Contains(" "+line+" ", " name="+name+" ") {
			continue
		}
		all++
		if strings.Contains(line, " sub=") && !strings.Contains(line, " sub=0 ") || strings.Contains(line, " psub=") && !strings.Contains(line, " psub=0 ") {
			pubsub++
		}
	}
	return all, pubsub
}

// TestWatchersShareOneSubscription: 500 waiters on 100 jobs hold one Redis
// pub/sub connection between them (CLIENT LIST stays within the pool size
// plus two, where a subscription per waiter would be 500 more), and every
// waiter sees its job's end through the shared subscription (the poll is
// an hour). When the last waiter leaves, the subscription closes.
func TestWatchersShareOneSubscription(t *testing.T) {
	const name, pool, jobs, per = "watch-fanout-test", 8, 100, 5
	opts := redisSrv.Options()
	opts.ClientName, opts.PoolSize = name, pool
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	admin := redisSrv.Client(t)
	s, err := jobstore.New(rdb, jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ids := make([]string, jobs)
	for i := range ids {
		ids[i] = fmt.Sprintf("fan%03d", i)
		_, err := s.Create(ctx, newJob(ids[i], 1))
		require.NoError(t, err)
	}
	var started sync.WaitGroup
	started.Add(jobs * per)
	type result struct {
		job   string
		state jobstore.State
		err   error
	}
	results := make(chan result, jobs*per)
	for _, id := range ids {
		for range per {
			go func() {
				first, last := true, jobstore.State("")
				err := s.Watch(ctx, id, func(j *jobstore.Job) bool {
					if first {
						first = false
						started.Done()
					}
					last = j.State
					return j.State.Terminal()
				})
				results <- result{id, last, err}
			}()
		}
	}
	started.Wait() // every waiter is registered and has read its job once
	all, pubsub := namedClients(t, ctx, admin, name)
	t.Logf("%d waiters: %d Redis connections, %d of them in pub/sub", jobs*per, all, pubsub)
	// The pool, the one subscription, and a spare go-redis may be dialing
	// while the pool is busy: a subscription per waiter would be 500.
	require.LessOrEqual(t, all, pool+2)
	require.Equal(t, 1, pubsub)

	for _, id := range ids {
		require.NoError(t, s.Fail(ctx, id, "ended by the test"))
	}
	seen := map[string]int{}
	for range jobs * per {
		select {
		case r := <-results:
			require.NoError(t, r.err, r.job)
			require.Equal(t, jobstore.StateFailed, r.state, r.job)
			seen[r.job]++
		case <-ctx.Done():
			t.Fatalf("only %d waiters saw their job end", len(seen))
		}
	}
	require.Len(t, seen, jobs)
	require.Eventually(t, func() bool {
		_, pubsub := namedClients(t, ctx, admin, name)
		return pubsub == 0
	}, 10*time.Second, 10*time.Millisecond, "the shared subscription closes with the last waiter")
}
