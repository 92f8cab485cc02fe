package auth

import (
	"fmt"
	"sync"
	"time"
)

// RateLimiter is a token bucket per identity name: SubmitRate per second,
// up to SubmitBurst at once. It is the coordinator process's own: with n
// coordinators an identity may submit n times the rate.
type RateLimiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewRateLimiter returns an empty limiter.
func NewRateLimiter() *RateLimiter {
	return &RateLimiter{buckets: map[string]*bucket{}, now: time.Now}
}

// Allow takes one submission from name's bucket under limits, or says
// which limit it exceeds and when the next submission is allowed. A rate
// of 0 is unlimited.
func (l *RateLimiter) Allow(name string, limits Limits) error {
	if limits.SubmitRate <= 0 {
		return nil
	}
	burst := float64(max(limits.SubmitBurst, 1))
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[name]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		l.buckets[name] = b
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*limits.SubmitRate)
	b.last = now
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / limits.SubmitRate * float64(time.Second))
		return fmt.Errorf("identity %s exceeds its submit rate limit of %g per second (burst %d): retry in %v",
			name, limits.SubmitRate, int(burst), wait.Round(time.Millisecond))
	}
	b.tokens--
	return nil
}
