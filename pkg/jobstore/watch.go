package jobstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Watch calls fn with the job's record now and after every change until fn
// returns true, ctx ends (its error is returned) or the job disappears
// (ErrNotFound). Changes are noticed through the job's pub/sub channel (a
// hint: the record is always re-read) and, as a safety net, every
// WatchPoll.
//
// Every Watch of a Store shares one Redis subscription (a pattern
// subscription to all jobs' channels, fanned out in the process to the
// waiters of each job), so the Redis connections a coordinator holds do
// not grow with the number of waiting clients.
func (s *Store) Watch(ctx context.Context, job string, fn func(*Job) bool) error {
	if err := checkID(job); err != nil {
		return err
	}
	w, err := s.hub.add(ctx, s, job)
	if err != nil {
		return fmt.Errorf("jobstore: watch %s: subscribe: %w", job, err)
	}
	defer s.hub.remove(job, w)
	poll := time.NewTicker(s.cfg.WatchPoll)
	defer poll.Stop()
	var last string
	for {
		j, err := s.Get(ctx, job)
		if err != nil {
			return err
		}
		sig := fmt.Sprintf("%s/%d/%d/%s", j.State, j.Done, j.Updated.UnixMilli(), j.LastError)
		if sig != last {
			last = sig
			if fn(j) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w:
		case <-poll.C:
		}
	}
}

// hub fans the hints of one pattern subscription out to the Watch calls
// waiting on each job. It subscribes when the first waiter comes and
// unsubscribes when the last leaves.
type hub struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	n       int
	sub     *redis.PubSub
	done    chan struct{}
}

// add registers a waiter of job; once it returns, every hint published on
// the job's channel reaches the waiter's channel (one pending hint is
// kept: the waiter re-reads the record anyway).
func (h *hub) add(ctx context.Context, s *Store, job string) (chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sub == nil {
		sub := s.rdb.PSubscribe(ctx, s.channelPattern())
		if _, err := sub.Receive(ctx); err != nil {
			_ = sub.Close()
			return nil, err
		}
		h.sub, h.done = sub, make(chan struct{})
		go h.run(sub, h.done, s.cfg.Prefix+":{", "}:notify")
	}
	if h.waiters == nil {
		h.waiters = map[string]map[chan struct{}]struct{}{}
	}
	w := make(chan struct{}, 1)
	if h.waiters[job] == nil {
		h.waiters[job] = map[chan struct{}]struct{}{}
	}
	h.waiters[job][w] = struct{}{}
	h.n++
	return w, nil
}

func (h *hub) remove(job string, w chan struct{}) {
	h.mu.Lock()
	delete(h.waiters[job], w)
	if len(h.waiters[job]) == 0 {
		delete(h.waiters, job)
	}
	h.n--
	var done chan struct{}
	if h.n == 0 && h.sub != nil {
		_ = h.sub.Close()
		h.sub, done = nil, h.done
	}
	h.mu.Unlock()
	if done != nil {
		<-done
	}
}

// run delivers the subscription's messages until it is closed.
func (h *hub) run(sub *redis.PubSub, done chan struct{}, pre, post string) {
	defer close(done)
	for msg := range sub.Channel() {
		job, ok := strings.CutPrefix(msg.Channel, pre)
		if !ok {
			continue
		}
		if job, ok = strings.CutSuffix(job, post); !ok {
			continue
		}
		h.mu.Lock()
		for w := range h.waiters[job] {
			select {
			case w <- struct{}{}:
			default:
			}
		}
		h.mu.Unlock()
	}
}

// channelPattern matches every job's channel: Channel with the job id a
// glob, the prefix's glob characters escaped.
func (s *Store) channelPattern() string {
	var b strings.Builder
	for _, r := range s.cfg.Prefix {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String() + ":{*}:notify"
}
