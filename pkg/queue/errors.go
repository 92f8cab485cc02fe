package queue

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrInvalidConfig is returned by Open and NewSlot for a bad config; the
	// message names the field.
	ErrInvalidConfig = errors.New("queue: invalid config")
	// ErrBadTask is returned when task bytes do not decode to a valid
	// PartitionTask.
	ErrBadTask = errors.New("queue: bad task")
	// ErrBlobNotFound is returned when a C1 blob is missing (expired,
	// deleted, never stored).
	ErrBlobNotFound = errors.New("queue: blob not found")
	// ErrBadInput marks a handler error as permanent: the task is
	// terminated with the error as reason and never retried. Wrap it with
	// Permanent.
	ErrBadInput = errors.New("bad input")
	// ErrRejected marks a task that is not to be trusted: it does not match
	// the job it names (forged or corrupt). A Slot terminates it with a
	// reason that names no job (a DeadRejected dead letter), so no job is
	// touched because of it. Wrap it with Reject.
	ErrRejected = errors.New("rejected task")
)

// Reject marks err as a rejected task (errors.Is(err, ErrRejected)).
func Reject(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrRejected, err)
}

// Permanent marks err as permanent (errors.Is(err, ErrBadInput)): a Slot
// terminates the task with err's text as reason instead of retrying.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrBadInput, err)
}

// RetryError asks a Slot to redeliver the task after Delay.
type RetryError struct {
	Err   error
	Delay time.Duration
}

func (e *RetryError) Error() string { return fmt.Sprintf("retry after %v: %v", e.Delay, e.Err) }
func (e *RetryError) Unwrap() error { return e.Err }

// Retry marks err as transient, to be redelivered after delay (0: the
// queue's NakDelay). Errors that are neither Permanent nor Retry are
// treated as transient with NakDelay.
func Retry(err error, delay time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryError{Err: err, Delay: delay}
}
