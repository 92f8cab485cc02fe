package jobstore

import (
	"errors"
	"fmt"
	"time"
)

// State is a job's state.
type State string

// The job states. Terminal states are Done, Failed and Cancelled.
const (
	StateQueued     State = "queued"
	StateProving    State = "proving"
	StateAssembling State = "assembling"
	StateDone       State = "done"
	StateFailed     State = "failed"
	StateCancelled  State = "cancelled"
)

// Terminal reports whether no further transition is possible.
func (s State) Terminal() bool { return s == StateDone || s == StateFailed || s == StateCancelled }

// Valid reports whether s is one of the states.
func (s State) Valid() bool {
	switch s {
	case StateQueued, StateProving, StateAssembling, StateDone, StateFailed, StateCancelled:
		return true
	}
	return false
}

var (
	// ErrNotFound: no such job (never created, or expired).
	ErrNotFound = errors.New("jobstore: job not found")
	// ErrConflict: the job is not in a state the operation may leave; the
	// error text names the state.
	ErrConflict = errors.New("jobstore: state conflict")
	// ErrInvalid: a bad argument (names the field).
	ErrInvalid = errors.New("jobstore: invalid argument")
)

// ConflictError carries the state that blocked a transition.
type ConflictError struct {
	Op    string
	State State
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("jobstore: %s: job is %s", e.Op, e.State)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Timings are per-stage durations. Partition stages are sums over accepted
// partition results.
type Timings struct {
	QueueWait time.Duration
	Synthesis time.Duration
	Prove     time.Duration
	LockWait  time.Duration
	Verify    time.Duration
	// Assemble is the coordinator's assembly and whole-proof verification.
	Assemble time.Duration
}

// Sector names the sector of a job: its miner's actor id and its number,
// each nil when the submission did not give it.
type Sector struct {
	Miner, Number *uint64
}

// Known says whether both the miner and the number are given.
func (s Sector) Known() bool { return s.Miner != nil && s.Number != nil }

// NewJob is what Create records.
type NewJob struct {
	ID         string
	Shape      string
	Lane       string
	Partitions int
	Sector     Sector
	// BlobRef, BlobSize and BlobSHA256 locate the C1 output.
	BlobRef    string
	BlobSize   uint64
	BlobSHA256 []byte
	// TraceParent is the W3C traceparent of the job span.
	TraceParent    string
	IdempotencyKey string
	// Owner is the identity that submitted the job ("" where the API has
	// no authentication).
	Owner string
}

// Job is a job's record.
type Job struct {
	NewJob
	State State
	// Done is the number of partitions whose proof is in.
	Done int
	// Published is how many partition tasks the coordinator has published.
	Published int
	// Reason says why the job failed or was cancelled.
	Reason string
	// LastError is the most recent partition error a worker recorded.
	LastError                           string
	Created, Updated                    time.Time
	ProvingAt, AssemblingAt, FinishedAt time.Time
	Timings                             Timings
	// Proof is the assembled proof (done jobs only).
	Proof []byte
}

// Total is the job's wall time from creation to its terminal state (or to
// now when not terminal).
func (j *Job) Total(now time.Time) time.Duration {
	end := j.FinishedAt
	if end.IsZero() {
		end = now
	}
	return end.Sub(j.Created)
}

// PartitionTimings are the stage durations of one partition result.
type PartitionTimings struct {
	QueueWait, Synthesis, Prove, LockWait, Verify time.Duration
}

// BeginOutcome is the result of Begin.
type BeginOutcome string

const (
	// BeginOK: this attempt is now the partition's current one: prove it.
	BeginOK BeginOutcome = "ok"
	// BeginStale: a newer attempt exists: drop this delivery (ack it).
	BeginStale BeginOutcome = "stale"
	// BeginAlreadyDone: the partition's proof is in (a redelivery after a
	// crash between the result and the ack): ack; if the job is assembling,
	// request assembly again.
	BeginAlreadyDone BeginOutcome = "already_done"
	// BeginClosed: the job is done, failed or cancelled: drop it (ack).
	BeginClosed BeginOutcome = "closed"
)

// CompleteOutcome is the result of Complete.
type CompleteOutcome string

const (
	// Accepted: the proof was recorded.
	Accepted CompleteOutcome = "accepted"
	// Duplicate: a proof of this partition was already recorded (another
	// attempt won); nothing changed.
	Duplicate CompleteOutcome = "duplicate"
	// Stale: a newer attempt of this partition has begun; the result of
	// this one is rejected.
	Stale CompleteOutcome = "stale"
	// Closed: the job is no longer accepting results (cancelled, failed).
	Closed CompleteOutcome = "closed"
)

// CompleteResult is what Complete reports.
type CompleteResult struct {
	Outcome    CompleteOutcome
	Done       int
	Partitions int
	// State after the call. Assembling means every partition is in: the
	// caller must request assembly (idempotent).
	State State
}

// Event is one entry of a job's event stream.
type Event struct {
	ID     string
	Time   time.Time
	Fields map[string]string
}

// Resident is a shape's parameters loaded on a worker.
type Resident struct {
	Shape     string `json:"shape"`
	Residency string `json:"residency"`
}

// Worker is a worker's registration, refreshed by its heartbeat.
type Worker struct {
	ID       string     `json:"id"`
	Host     string     `json:"host"`
	Devices  []string   `json:"devices"`
	Slots    int        `json:"slots"`
	Resident []Resident `json:"resident"`
	Current  []string   `json:"current"`
	// Held are the acknowledgement subjects of the deliveries behind
	// Current: a worker restarted under the same id releases them
	// (queue.Release).
	Held      []string  `json:"held,omitempty"`
	Version   string    `json:"version"`
	Heartbeat time.Time `json:"heartbeat"`
	// Keys are the fingerprints of the proving keys the worker loaded, one
	// per shape (groth16.VerifyingKey.Fingerprint).
	Keys []KeyFingerprint `json:"keys,omitempty"`
}
