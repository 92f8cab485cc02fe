package interlock

import (
	"context"
)

// ctxLock is a mutex whose Lock gives up when its context ends.
type ctxLock struct{ ch chan struct{} }

func newCtxLock() *ctxLock { return &ctxLock{ch: make(chan struct{}, 1)} }

func (l *ctxLock) lock(ctx context.Context) error {
	select {
	case l.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *ctxLock) unlock() { <-l.ch }
