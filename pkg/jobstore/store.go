package jobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of Config.
const (
	PrefixDefault    = "c2"
	JobTTLDefault    = 7 * 24 * time.Hour
	WorkerTTLDefault = 30 * time.Second
	WatchPollDefault = 2 * time.Second
	MaxIdemKeyLen    = 128
	MaxReasonLen     = 2048
)

// Config configures a Store. Zero values mean the defaults.
type Config struct {
	// Prefix of every key. Default "c2".
	Prefix string
	// JobTTL is how long a job's keys (and its idempotency key and index
	// entry) live after their last write. Default 7 days.
	JobTTL time.Duration
	// WorkerTTL is how long a worker registration lives without a
	// heartbeat. Default 30 s.
	WorkerTTL time.Duration
	// WatchPoll is how often Watch re-reads a job when no pub/sub hint
	// arrives. Default 2 s.
	WatchPoll time.Duration
	// Now is the clock (tests). Default time.Now.
	Now func() time.Time
}

// Store is the job store. It is safe for concurrent use.
type Store struct {
	rdb redis.UniversalClient
	cfg Config
	// closer is the client Dial opened (nil for New: the caller owns it).
	closer interface{ Close() error }
	// hub is the one pub/sub subscription every Watch shares (watch.go).
	hub hub
}

// New returns a store on rdb (which stays owned by the caller).
func New(rdb redis.UniversalClient, cfg Config) (*Store, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = PrefixDefault
	}
	if strings.ContainsAny(cfg.Prefix, "{} ") {
		return nil, fmt.Errorf("%w: Config.Prefix %q must not contain braces or spaces", ErrInvalid, cfg.Prefix)
	}
	if cfg.JobTTL == 0 {
		cfg.JobTTL = JobTTLDefault
	}
	if cfg.WorkerTTL == 0 {
		cfg.WorkerTTL = WorkerTTLDefault
	}
	if cfg.WatchPoll == 0 {
		cfg.WatchPoll = WatchPollDefault
	}
	if cfg.JobTTL < time.Second || cfg.WorkerTTL < time.Second || cfg.WatchPoll < time.Millisecond {
		return nil, fmt.Errorf("%w: Config.JobTTL and WorkerTTL must be ≥ 1s, WatchPoll ≥ 1ms", ErrInvalid)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{rdb: rdb, cfg: cfg}, nil
}

// Client returns the Redis client.
func (s *Store) Client() redis.UniversalClient { return s.rdb }

func (s *Store) key(job, kind string) string { return s.cfg.Prefix + ":{" + job + "}:" + kind }

// Channel is the pub/sub channel of a job's change hints.
func (s *Store) Channel(job string) string { return s.key(job, "notify") }

func (s *Store) indexKey() string           { return s.cfg.Prefix + ":jobs" }
func (s *Store) workersKey() string         { return s.cfg.Prefix + ":workers" }
func (s *Store) workerKey(id string) string { return s.cfg.Prefix + ":worker:" + id }
func (s *Store) idemKey(k string) string {
	sum := sha256.Sum256([]byte(k))
	return s.cfg.Prefix + ":idem:{" + hex.EncodeToString(sum[:]) + "}"
}

func (s *Store) nowMs() int64 { return s.cfg.Now().UnixMilli() }
func (s *Store) ttlMs() int64 { return s.cfg.JobTTL.Milliseconds() }

func checkID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("%w: job id %q must have 1..64 characters", ErrInvalid, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w: job id %q has character %q outside [A-Za-z0-9_-]", ErrInvalid, id, c)
		}
	}
	return nil
}

// Create records a new job in state queued. It returns false (and no
// error) when the job exists already.
func (s *Store) Create(ctx context.Context, j NewJob) (bool, error) {
	if err := checkID(j.ID); err != nil {
		return false, err
	}
	if j.Partitions < 1 {
		return false, fmt.Errorf("%w: Partitions %d must be ≥ 1", ErrInvalid, j.Partitions)
	}
	if j.Shape == "" || j.Lane == "" {
		return false, fmt.Errorf("%w: Shape and Lane are required", ErrInvalid)
	}
	now := s.nowMs()
	args := []any{s.ttlMs(),
		"id", j.ID, "state", string(StateQueued), "shape", j.Shape, "lane", j.Lane,
		"partitions", j.Partitions, "done", 0, "published", 0,
		"miner", optUint(j.Sector.Miner), "sector", optUint(j.Sector.Number),
		"blob", j.BlobRef, "blob_size", j.BlobSize, "blob_sha256", hex.EncodeToString(j.BlobSHA256),
		"traceparent", j.TraceParent, "idem", j.IdempotencyKey, "owner", j.Owner,
		"created_ms", now, "updated_ms", now,
	}
	n, err := createScript.Run(ctx, s.rdb, []string{s.key(j.ID, "job")}, args...).Int()
	if err != nil {
		return false, fmt.Errorf("jobstore: create %s: %w", j.ID, err)
	}
	if n == 1 {
		pipe := s.rdb.Pipeline()
		pipe.ZAdd(ctx, s.indexKey(), redis.Z{Score: float64(now), Member: j.ID})
		pipe.ZRemRangeByScore(ctx, s.indexKey(), "-inf", strconv.FormatInt(now-s.ttlMs(), 10))
		pipe.PExpire(ctx, s.indexKey(), s.cfg.JobTTL)
		s.indexOwner(ctx, pipe, j, now)
		if _, err := pipe.Exec(ctx); err != nil {
			return true, fmt.Errorf("jobstore: index %s: %w", j.ID, err)
		}
	}
	return n == 1, nil
}

// SetPublished records the stream sequences of published partition tasks
// (for Cancel) and the number published so far.
func (s *Store) SetPublished(ctx context.Context, job string, seqs map[uint32]uint64, published int) error {
	if err := checkID(job); err != nil {
		return err
	}
	pipe := s.rdb.TxPipeline()
	if len(seqs) > 0 {
		vals := make([]any, 0, 2*len(seqs))
		for p, seq := range seqs {
			vals = append(vals, p, seq)
		}
		pipe.HSet(ctx, s.key(job, "seqs"), vals...)
		pipe.PExpire(ctx, s.key(job, "seqs"), s.cfg.JobTTL)
	}
	pipe.HSet(ctx, s.key(job, "job"), "published", published)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("jobstore: set published of %s: %w", job, err)
	}
	return nil
}

// Seqs returns the recorded stream sequences of a job's tasks.
func (s *Store) Seqs(ctx context.Context, job string) ([]uint64, error) {
	m, err := s.rdb.HGetAll(ctx, s.key(job, "seqs")).Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: seqs of %s: %w", job, err)
	}
	out := make([]uint64, 0, len(m))
	for _, v := range m {
		seq, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("jobstore: seqs of %s: bad value %q", job, v)
		}
		out = append(out, seq)
	}
	slices.Sort(out)
	return out, nil
}

// Begin registers attempt as partition's current attempt (fencing older
// ones) and moves a queued job to proving. Workers call it when a task is
// delivered, before any work; see BeginOutcome for what to do next.
func (s *Store) Begin(ctx context.Context, job string, partition uint32, attempt int, worker string) (BeginOutcome, State, error) {
	if err := checkID(job); err != nil {
		return "", "", err
	}
	if attempt < 1 {
		return "", "", fmt.Errorf("%w: attempt %d must be ≥ 1", ErrInvalid, attempt)
	}
	res, err := beginScript.Run(ctx, s.rdb,
		[]string{s.key(job, "job"), s.key(job, "attempts"), s.key(job, "proofs"), s.key(job, "events")},
		partition, attempt, worker, s.nowMs(), s.ttlMs(), s.Channel(job)).StringSlice()
	if err != nil {
		return "", "", fmt.Errorf("jobstore: begin %s.%d: %w", job, partition, err)
	}
	switch res[0] {
	case "missing":
		return "", "", fmt.Errorf("%w: %s", ErrNotFound, job)
	case "out_of_range":
		return "", "", fmt.Errorf("%w: begin %s.%d: the job has %s partitions", ErrInvalid, job, partition, res[1])
	}
	return BeginOutcome(res[0]), State(res[1]), nil
}

// Complete is the atomic complete-partition step (one Lua script): it
// rejects a result whose attempt is older than the partition's current one
// (Stale), records the proof only if none is (HSETNX; else Duplicate),
// counts it (HINCRBY done), adds the stage timings, records worker as the
// partition's prover (Provers), and moves the job to assembling when the
// last partition is in.
func (s *Store) Complete(ctx context.Context, job string, partition uint32, attempt int, proof []byte, t PartitionTimings, worker string) (CompleteResult, error) {
	if err := checkID(job); err != nil {
		return CompleteResult{}, err
	}
	if len(proof) == 0 {
		return CompleteResult{}, fmt.Errorf("%w: empty proof", ErrInvalid)
	}
	res, err := completeScript.Run(ctx, s.rdb,
		[]string{s.key(job, "job"), s.key(job, "attempts"), s.key(job, "proofs"), s.key(job, "events"), s.provers(job)},
		partition, attempt, proof, worker, s.nowMs(), s.ttlMs(), s.Channel(job),
		t.QueueWait.Microseconds(), t.Synthesis.Microseconds(), t.Prove.Microseconds(),
		t.LockWait.Microseconds(), t.Verify.Microseconds()).Slice()
	if err != nil {
		return CompleteResult{}, fmt.Errorf("jobstore: complete %s.%d: %w", job, partition, err)
	}
	outcome, _ := res[0].(string)
	done, _ := res[1].(int64)
	parts, _ := res[2].(int64)
	switch outcome {
	case "missing":
		return CompleteResult{}, fmt.Errorf("%w: %s", ErrNotFound, job)
	case "out_of_range":
		return CompleteResult{}, fmt.Errorf("%w: complete %s.%d: the job has %d partitions", ErrInvalid, job, partition, parts)
	}
	state, _ := res[3].(string)
	return CompleteResult{Outcome: CompleteOutcome(outcome), Done: int(done), Partitions: int(parts), State: State(state)}, nil
}

// RecordFailure notes a partition error (the job's last error and an
// event); the job's state does not change.
func (s *Store) RecordFailure(ctx context.Context, job string, partition uint32, attempt int, worker string, cause error) error {
	if err := checkID(job); err != nil {
		return err
	}
	msg := truncate(cause.Error(), MaxReasonLen)
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, s.key(job, "job"), "last_error", fmt.Sprintf("partition %d attempt %d: %s", partition, attempt, msg), "updated_ms", s.nowMs())
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: s.key(job, "events"), MaxLen: 512, Approx: true,
		Values: []any{"type", "error", "partition", partition, "attempt", attempt, "worker", worker, "message", msg}})
	pipe.PExpire(ctx, s.key(job, "events"), s.cfg.JobTTL)
	pipe.Publish(ctx, s.Channel(job), "error")
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("jobstore: record failure of %s.%d: %w", job, partition, err)
	}
	return nil
}

func (s *Store) transition(ctx context.Context, op, job string, to State, from []State, message string, fields ...any) (State, error) {
	if err := checkID(job); err != nil {
		return "", err
	}
	allowed := make([]string, len(from))
	for i, f := range from {
		allowed[i] = string(f)
	}
	args := append([]any{string(to), strings.Join(allowed, ","), s.nowMs(), s.ttlMs(), s.Channel(job), message}, fields...)
	res, err := transitionScript.Run(ctx, s.rdb, []string{s.key(job, "job"), s.key(job, "events")}, args...).Slice()
	if err != nil {
		return "", fmt.Errorf("jobstore: %s %s: %w", op, job, err)
	}
	n, _ := res[0].(int64)
	state, _ := res[1].(string)
	switch n {
	case -1:
		return "", fmt.Errorf("%w: %s", ErrNotFound, job)
	case 0:
		return State(state), &ConflictError{Op: op, State: State(state)}
	}
	return State(state), nil
}

var nonTerminal = []State{StateQueued, StateProving, StateAssembling}

// Fail moves a non-terminal job to failed with reason. A job already
// terminal gives a *ConflictError (errors.Is ErrConflict).
func (s *Store) Fail(ctx context.Context, job, reason string) error {
	reason = truncate(reason, MaxReasonLen)
	_, err := s.transition(ctx, "fail", job, StateFailed, nonTerminal, reason, "reason", reason, "finished_ms", s.nowMs())
	return err
}

// Cancel moves a non-terminal job to cancelled with reason and returns the
// stream sequences of its tasks, for deletion from the queue.
func (s *Store) Cancel(ctx context.Context, job, reason string) ([]uint64, error) {
	reason = truncate(reason, MaxReasonLen)
	if _, err := s.transition(ctx, "cancel", job, StateCancelled, nonTerminal, reason, "reason", reason, "finished_ms", s.nowMs()); err != nil {
		return nil, err
	}
	return s.Seqs(ctx, job)
}

// Finish moves an assembling job to done with its proof and the assembly
// time.
func (s *Store) Finish(ctx context.Context, job string, proof []byte, assemble time.Duration) error {
	_, err := s.transition(ctx, "finish", job, StateDone, []State{StateAssembling}, "proof verified",
		"proof", proof, "t_assemble_us", assemble.Microseconds(), "finished_ms", s.nowMs())
	return err
}

// Proofs returns the recorded partition proofs in partition order; a
// missing partition is nil.
func (s *Store) Proofs(ctx context.Context, job string, partitions int) ([][]byte, error) {
	fields := make([]string, partitions)
	for i := range fields {
		fields[i] = strconv.Itoa(i)
	}
	vals, err := s.rdb.HMGet(ctx, s.key(job, "proofs"), fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: proofs of %s: %w", job, err)
	}
	out := make([][]byte, partitions)
	for i, v := range vals {
		if str, ok := v.(string); ok {
			out[i] = []byte(str)
		}
	}
	return out, nil
}

// Attempt returns a partition's current attempt (0 if none began).
func (s *Store) Attempt(ctx context.Context, job string, partition uint32) (int, error) {
	n, err := s.rdb.HGet(ctx, s.key(job, "attempts"), strconv.FormatUint(uint64(partition), 10)).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("jobstore: attempt of %s.%d: %w", job, partition, err)
	}
	return n, nil
}

// Get reads a job. A missing job is ErrNotFound.
func (s *Store) Get(ctx context.Context, job string) (*Job, error) {
	if err := checkID(job); err != nil {
		return nil, err
	}
	m, err := s.rdb.HGetAll(ctx, s.key(job, "job")).Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: get %s: %w", job, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, job)
	}
	return decodeJob(m)
}

// JobState reads only a job's state: the cheap check a worker makes at
// each stage boundary to drop the partition of a cancelled or failed job.
func (s *Store) JobState(ctx context.Context, job string) (State, error) {
	if err := checkID(job); err != nil {
		return "", err
	}
	v, err := s.rdb.HGet(ctx, s.key(job, "job"), "state").Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, job)
	}
	if err != nil {
		return "", fmt.Errorf("jobstore: state of %s: %w", job, err)
	}
	return State(v), nil
}

// Events returns a job's events, oldest first.
func (s *Store) Events(ctx context.Context, job string) ([]Event, error) {
	msgs, err := s.rdb.XRange(ctx, s.key(job, "events"), "-", "+").Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: events of %s: %w", job, err)
	}
	out := make([]Event, 0, len(msgs))
	for _, m := range msgs {
		e := Event{ID: m.ID, Fields: map[string]string{}}
		if ms, _, ok := strings.Cut(m.ID, "-"); ok {
			if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
				e.Time = time.UnixMilli(n)
			}
		}
		for k, v := range m.Values {
			e.Fields[k] = fmt.Sprint(v)
		}
		out = append(out, e)
	}
	return out, nil
}

// List returns up to limit jobs, newest first, in the given state ("" for
// any). It scans at most 10,000 index entries.
func (s *Store) List(ctx context.Context, state State, limit int) ([]*Job, error) {
	return s.list(ctx, limit, func(j *Job) bool { return state == "" || j.State == state })
}

// list returns up to limit jobs that keep accepts, newest first, scanning
// at most 10,000 index entries.
func (s *Store) list(ctx context.Context, limit int, keep func(*Job) bool) ([]*Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	const page, maxScan = 200, 10000
	var out []*Job
	for start := int64(0); start < maxScan && len(out) < limit; start += page {
		ids, err := s.rdb.ZRevRange(ctx, s.indexKey(), start, start+page-1).Result()
		if err != nil {
			return nil, fmt.Errorf("jobstore: list: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.MapStringStringCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.HGetAll(ctx, s.key(id, "job"))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, fmt.Errorf("jobstore: list: %w", err)
		}
		for _, c := range cmds {
			m := c.Val()
			if len(m) == 0 {
				continue // expired
			}
			j, err := decodeJob(m)
			if err != nil {
				return nil, err
			}
			if keep(j) {
				out = append(out, j)
				if len(out) == limit {
					break
				}
			}
		}
	}
	return out, nil
}

// Heartbeat registers or refreshes a worker for WorkerTTL.
func (s *Store) Heartbeat(ctx context.Context, w Worker) error {
	if w.ID == "" || strings.ContainsAny(w.ID, " {}") {
		return fmt.Errorf("%w: worker ID %q", ErrInvalid, w.ID)
	}
	w.Heartbeat = s.cfg.Now()
	b, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("jobstore: heartbeat %s: %w", w.ID, err)
	}
	pipe := s.rdb.Pipeline()
	pipe.Set(ctx, s.workerKey(w.ID), b, s.cfg.WorkerTTL)
	pipe.ZAdd(ctx, s.workersKey(), redis.Z{Score: float64(w.Heartbeat.UnixMilli()), Member: w.ID})
	pipe.Expire(ctx, s.workersKey(), s.cfg.JobTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("jobstore: heartbeat %s: %w", w.ID, err)
	}
	return nil
}

// Unregister removes a worker (on clean shutdown).
func (s *Store) Unregister(ctx context.Context, id string) error {
	pipe := s.rdb.Pipeline()
	pipe.Del(ctx, s.workerKey(id))
	pipe.ZRem(ctx, s.workersKey(), id)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("jobstore: unregister %s: %w", id, err)
	}
	return nil
}

// Workers lists live workers (registration not expired), by id.
func (s *Store) Workers(ctx context.Context) ([]Worker, error) {
	ids, err := s.rdb.ZRange(ctx, s.workersKey(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: workers: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	// One GET per key: worker keys do not share a slot on Redis Cluster.
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.Get(ctx, s.workerKey(id))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("jobstore: workers: %w", err)
	}
	var out []Worker
	var gone []any
	for i, c := range cmds {
		b, err := c.Bytes()
		if err != nil {
			gone = append(gone, ids[i])
			continue
		}
		var w Worker
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, fmt.Errorf("jobstore: worker %s: %w", ids[i], err)
		}
		out = append(out, w)
	}
	if len(gone) > 0 {
		s.rdb.ZRem(ctx, s.workersKey(), gone...)
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func decodeJob(m map[string]string) (*Job, error) {
	i := func(k string) int64 {
		n, _ := strconv.ParseInt(m[k], 10, 64)
		return n
	}
	u := func(k string) uint64 {
		n, _ := strconv.ParseUint(m[k], 10, 64)
		return n
	}
	ou := func(k string) *uint64 {
		n, err := strconv.ParseUint(m[k], 10, 64)
		if err != nil {
			return nil
		}
		return &n
	}
	t := func(k string) time.Time {
		if n := i(k); n > 0 {
			return time.UnixMilli(n)
		}
		return time.Time{}
	}
	us := func(k string) time.Duration { return time.Duration(i(k)) * time.Microsecond }
	sha, err := hex.DecodeString(m["blob_sha256"])
	if err != nil {
		return nil, fmt.Errorf("jobstore: job %s: bad blob_sha256", m["id"])
	}
	j := &Job{
		NewJob: NewJob{
			ID: m["id"], Shape: m["shape"], Lane: m["lane"], Partitions: int(i("partitions")),
			Sector:  Sector{Miner: ou("miner"), Number: ou("sector")},
			BlobRef: m["blob"], BlobSize: u("blob_size"), BlobSHA256: sha,
			TraceParent: m["traceparent"], IdempotencyKey: m["idem"], Owner: m["owner"],
		},
		State: State(m["state"]), Done: int(i("done")), Published: int(i("published")),
		Reason: m["reason"], LastError: m["last_error"],
		Created: t("created_ms"), Updated: t("updated_ms"), ProvingAt: t("proving_ms"),
		AssemblingAt: t("assembling_ms"), FinishedAt: t("finished_ms"),
		Timings: Timings{QueueWait: us("t_queue_us"), Synthesis: us("t_synth_us"), Prove: us("t_prove_us"),
			LockWait: us("t_lock_us"), Verify: us("t_verify_us"), Assemble: us("t_assemble_us")},
	}
	if p := m["proof"]; p != "" {
		j.Proof = []byte(p)
	}
	if !j.State.Valid() {
		return nil, fmt.Errorf("jobstore: job %s has unknown state %q", j.ID, j.State)
	}
	return j, nil
}

// optUint is an optional number as a hash field: "" when absent.
func optUint(v *uint64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatUint(*v, 10)
}
