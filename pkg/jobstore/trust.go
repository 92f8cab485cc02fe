package jobstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Proof trust: who proved each partition, the bad proofs of a job and the
// re-queue of their partitions, workers' counts of bad proofs and their
// quarantine, and the verifying-key fingerprints the coordinator publishes.
//
//	<prefix>:{<job>}:provers   hash: partition → worker whose proof is recorded
//	<prefix>:{<job>}:bad       hash: partition → bad proofs of it so far;
//	                           "<partition>:w" → those proofs' workers
//	<prefix>:trust:<worker>    hash: bad, last_bad, quarantined_ms, reason, by
//	<prefix>:quarantined       sorted set: quarantined worker ids by time
//	<prefix>:vk:<shape>        string (JSON): the coordinator's key fingerprint

// BadProofWindow is how long a worker's count of bad proofs lasts after
// its last bad proof while it is not quarantined.
const BadProofWindow = 24 * time.Hour

// KeyFingerprint is the fingerprint of one shape's verifying key.
type KeyFingerprint struct {
	Shape       string `json:"shape"`
	Fingerprint string `json:"fingerprint"`
}

// CoordinatorKey is a shape's verifying key as a coordinator published it.
type CoordinatorKey struct {
	Fingerprint string `json:"fingerprint"`
	// File is the coordinator's .vk file.
	File string `json:"file"`
}

// Quarantine says why and since when a worker takes no work.
type Quarantine struct {
	Reason string
	Since  time.Time
	// By is "coordinator" (bad proofs, a key that does not match), "worker"
	// (the worker's own key check) or "operator".
	By string
}

// WorkerTrust is a worker's trust record.
type WorkerTrust struct {
	ID string
	// BadProofs counts its partition proofs that failed verification since
	// its last release (within BadProofWindow of the last one).
	BadProofs int
	// LastBad describes the last of them.
	LastBad string
	// Quarantine is nil unless the worker is quarantined.
	Quarantine *Quarantine
}

func (s *Store) trustKey(id string) string      { return s.cfg.Prefix + ":trust:" + id }
func (s *Store) quarantinedKey() string         { return s.cfg.Prefix + ":quarantined" }
func (s *Store) vkKey(shape string) string      { return s.cfg.Prefix + ":vk:" + shape }
func (s *Store) provers(job string) string      { return s.key(job, "provers") }
func (s *Store) badProofsKey(job string) string { return s.key(job, "bad") }

func checkWorkerID(id string) error {
	if id == "" || len(id) > 256 || strings.ContainsAny(id, " {}") {
		return fmt.Errorf("%w: worker ID %q", ErrInvalid, id)
	}
	return nil
}

// Provers returns the worker whose proof is recorded for each partition
// (partitions proved before provers were recorded are missing).
func (s *Store) Provers(ctx context.Context, job string) (map[int]string, error) {
	m, err := s.rdb.HGetAll(ctx, s.provers(job)).Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: provers of %s: %w", job, err)
	}
	out := make(map[int]string, len(m))
	for k, v := range m {
		if p, err := strconv.Atoi(k); err == nil {
			out[p] = v
		}
	}
	return out, nil
}

// BadProof is a partition whose recorded proof failed verification.
type BadProof struct {
	Partition int
	Reason    string
}

// RejectOutcome is the result of RejectProofs.
type RejectOutcome string

const (
	// Requeued: the bad proofs were removed and the job is proving again;
	// publish the partitions' tasks (Requeue) and call RequeuePublished.
	Requeued RejectOutcome = "requeued"
	// Exhausted: a partition reached the bound of bad proofs; nothing was
	// removed: fail the job.
	Exhausted RejectOutcome = "exhausted"
	// NotAssembling: the job left assembling meanwhile (cancelled, or
	// another coordinator handled it); nothing changed.
	NotAssembling RejectOutcome = "not_assembling"
)

// RejectedPartition is one partition of a RejectProofs call.
type RejectedPartition struct {
	Partition int
	// Worker made the bad proof ("" when unknown).
	Worker string
	// BadProofs of this partition so far, this one included.
	BadProofs int
	// Workers whose proofs of it failed, oldest first: the excluded ones.
	Workers []string
}

// RejectResult is what RejectProofs reports.
type RejectResult struct {
	Outcome RejectOutcome
	// Round is the job's re-queue round after this call (Requeued).
	Round      int
	Partitions []RejectedPartition
	// State is the job's state when NotAssembling.
	State State
}

// RejectProofs handles partition proofs of an assembling job that failed
// verification, in one Lua script: each partition's count of bad proofs and
// the workers that made them are recorded (and an event); when a partition
// reaches maxPerPartition bad proofs the outcome is Exhausted and nothing
// else changes; otherwise the proofs are removed (and their attempt fences,
// so the re-queued tasks' first deliveries may record results), done goes
// down, the job becomes proving, its re-queue round goes up and the
// partitions are recorded as waiting to be published again
// (PendingRequeue).
func (s *Store) RejectProofs(ctx context.Context, job string, bad []BadProof, maxPerPartition int) (RejectResult, error) {
	if err := checkID(job); err != nil {
		return RejectResult{}, err
	}
	if len(bad) == 0 || maxPerPartition < 1 {
		return RejectResult{}, fmt.Errorf("%w: RejectProofs needs partitions and a bound ≥ 1", ErrInvalid)
	}
	args := []any{maxPerPartition, s.nowMs(), s.ttlMs(), s.Channel(job)}
	for _, b := range bad {
		args = append(args, b.Partition, truncate(b.Reason, MaxReasonLen))
	}
	res, err := rejectScript.Run(ctx, s.rdb, []string{s.key(job, "job"), s.key(job, "proofs"), s.key(job, "attempts"),
		s.provers(job), s.badProofsKey(job), s.key(job, "events")}, args...).StringSlice()
	if err != nil {
		return RejectResult{}, fmt.Errorf("jobstore: reject proofs of %s: %w", job, err)
	}
	switch res[0] {
	case "missing":
		return RejectResult{}, fmt.Errorf("%w: %s", ErrNotFound, job)
	case "not_assembling":
		return RejectResult{Outcome: NotAssembling, State: State(res[1])}, nil
	}
	r := RejectResult{Outcome: RejectOutcome(res[0])}
	r.Round, _ = strconv.Atoi(res[1])
	for i := 2; i+3 < len(res); i += 4 {
		p, _ := strconv.Atoi(res[i])
		c, _ := strconv.Atoi(res[i+2])
		r.Partitions = append(r.Partitions, RejectedPartition{Partition: p, Worker: res[i+1], BadProofs: c, Workers: strings.Fields(res[i+3])})
	}
	return r, nil
}

// rejectScript: KEYS job, proofs, attempts, provers, bad, events.
// ARGV max, now_ms, ttl_ms, channel, then partition, reason pairs.
// Returns {outcome, round, then partition, worker, count, workers per
// partition}, or {'missing'} / {'not_assembling', state}.
var rejectScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing'} end
if state ~= 'assembling' then return {'not_assembling', state} end
local max = tonumber(ARGV[1])
local out = {}
local exhausted = false
local parts = {}
for i = 5, #ARGV, 2 do
  local p = ARGV[i]
  local w = redis.call('HGET', KEYS[4], p) or ''
  local c = redis.call('HINCRBY', KEYS[5], p, 1)
  local ws = redis.call('HGET', KEYS[5], p .. ':w') or ''
  if w ~= '' and not string.find(' ' .. ws .. ' ', ' ' .. w .. ' ', 1, true) then
    if ws == '' then ws = w else ws = ws .. ' ' .. w end
    redis.call('HSET', KEYS[5], p .. ':w', ws)
  end
  redis.call('XADD', KEYS[6], 'MAXLEN', '~', '512', '*', 'type', 'bad_proof', 'partition', p, 'worker', w, 'count', c, 'message', ARGV[i+1])
  if c >= max then exhausted = true end
  table.insert(out, p); table.insert(out, w); table.insert(out, tostring(c)); table.insert(out, ws)
  table.insert(parts, p)
end
local round = tonumber(redis.call('HGET', KEYS[1], 'round') or '0')
if exhausted then
  table.insert(out, 1, tostring(round)); table.insert(out, 1, 'exhausted')
else
  for _, p in ipairs(parts) do
    redis.call('HDEL', KEYS[2], p)
    redis.call('HDEL', KEYS[3], p)
    redis.call('HDEL', KEYS[4], p)
  end
  round = redis.call('HINCRBY', KEYS[1], 'round', 1)
  local done = tonumber(redis.call('HGET', KEYS[1], 'done') or '0') - #parts
  if done < 0 then done = 0 end
  redis.call('HSET', KEYS[1], 'state', 'proving', 'done', done, 'requeue', table.concat(parts, ','), 'updated_ms', ARGV[2])
  redis.call('XADD', KEYS[6], 'MAXLEN', '~', '512', '*', 'type', 'requeue', 'from', state, 'round', round, 'partitions', table.concat(parts, ','))
  table.insert(out, 1, tostring(round)); table.insert(out, 1, 'requeued')
end
for i = 1, 6 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
redis.call('PUBLISH', ARGV[4], 'requeue')
return out
`)

// Requeue is a job's partitions waiting to be published again.
type Requeue struct {
	Round      int
	Partitions []int
	// Excluded are, per partition, the workers whose proofs of it failed.
	Excluded map[int][]string
}

// PendingRequeue returns the partitions RejectProofs removed and that are
// not yet published again (Partitions empty when none).
func (s *Store) PendingRequeue(ctx context.Context, job string) (Requeue, error) {
	if err := checkID(job); err != nil {
		return Requeue{}, err
	}
	v, err := s.rdb.HMGet(ctx, s.key(job, "job"), "round", "requeue").Result()
	if err != nil {
		return Requeue{}, fmt.Errorf("jobstore: requeue of %s: %w", job, err)
	}
	var r Requeue
	if str, ok := v[0].(string); ok {
		r.Round, _ = strconv.Atoi(str)
	}
	str, _ := v[1].(string)
	if str == "" {
		return r, nil
	}
	r.Excluded = map[int][]string{}
	for _, f := range strings.Split(str, ",") {
		p, err := strconv.Atoi(f)
		if err != nil {
			return Requeue{}, fmt.Errorf("jobstore: requeue of %s: bad partition %q", job, f)
		}
		r.Partitions = append(r.Partitions, p)
		ws, err := s.rdb.HGet(ctx, s.badProofsKey(job), f+":w").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return Requeue{}, fmt.Errorf("jobstore: requeue of %s: %w", job, err)
		}
		r.Excluded[p] = strings.Fields(ws)
	}
	return r, nil
}

// RequeuePublished records the re-queued tasks of round as published: their
// stream sequences replace the partitions' (for Cancel), and the pending
// re-queue is cleared unless a later round replaced it.
func (s *Store) RequeuePublished(ctx context.Context, job string, round int, seqs map[uint32]uint64) error {
	if err := checkID(job); err != nil {
		return err
	}
	args := []any{round, s.ttlMs()}
	for p, seq := range seqs {
		args = append(args, p, seq)
	}
	err := requeuedScript.Run(ctx, s.rdb, []string{s.key(job, "job"), s.key(job, "seqs")}, args...).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("jobstore: requeue published of %s: %w", job, err)
	}
	return nil
}

var requeuedScript = redis.NewScript(`
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i+1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if redis.call('HGET', KEYS[1], 'round') == ARGV[1] then redis.call('HDEL', KEYS[1], 'requeue') end
return 1
`)

// RecordBadProof counts a partition proof of worker that failed
// verification, with a description of it. When the worker's count reaches
// threshold (≥ 1) it is quarantined (By "coordinator"). It returns the
// count and the worker's quarantine (nil when not quarantined) and whether
// this call quarantined it.
func (s *Store) RecordBadProof(ctx context.Context, worker, detail string, threshold int) (int, *Quarantine, bool, error) {
	if err := checkWorkerID(worker); err != nil {
		return 0, nil, false, err
	}
	pipe := s.rdb.TxPipeline()
	n := pipe.HIncrBy(ctx, s.trustKey(worker), "bad", 1)
	pipe.HSet(ctx, s.trustKey(worker), "last_bad", truncate(detail, MaxReasonLen))
	q := pipe.HExists(ctx, s.trustKey(worker), "quarantined_ms")
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, nil, false, fmt.Errorf("jobstore: bad proof of %s: %w", worker, err)
	}
	count := int(n.Val())
	if !q.Val() {
		if count < threshold {
			s.rdb.PExpire(ctx, s.trustKey(worker), BadProofWindow)
			return count, nil, false, nil
		}
		reason := fmt.Sprintf("%d partition proofs failed verification; the last: %s", count, detail)
		qr, newly, err := s.Quarantine(ctx, worker, reason, "coordinator")
		return count, qr, newly, err
	}
	t, err := s.Trust(ctx, worker)
	if err != nil {
		return count, nil, false, err
	}
	return count, t.Quarantine, false, nil
}

// quarantineScript: KEYS trust. ARGV now_ms, reason, by. Quarantines unless
// quarantined already; returns 1 when it did.
var quarantineScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'quarantined_ms') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'quarantined_ms', ARGV[1], 'reason', ARGV[2], 'by', ARGV[3])
redis.call('PERSIST', KEYS[1])
return 1
`)

// Quarantine quarantines a worker with reason, unless it is quarantined
// already (the first quarantine's reason stays). It returns the quarantine
// and whether this call made it. A quarantine lasts until Release.
func (s *Store) Quarantine(ctx context.Context, worker, reason, by string) (*Quarantine, bool, error) {
	if err := checkWorkerID(worker); err != nil {
		return nil, false, err
	}
	if reason == "" {
		return nil, false, fmt.Errorf("%w: a quarantine needs a reason", ErrInvalid)
	}
	now := s.cfg.Now()
	n, err := quarantineScript.Run(ctx, s.rdb, []string{s.trustKey(worker)}, now.UnixMilli(), truncate(reason, MaxReasonLen), by).Int()
	if err != nil {
		return nil, false, fmt.Errorf("jobstore: quarantine %s: %w", worker, err)
	}
	t, err := s.Trust(ctx, worker)
	if err != nil {
		return nil, false, err
	}
	if t.Quarantine == nil {
		return nil, false, fmt.Errorf("jobstore: quarantine %s: released meanwhile", worker)
	}
	if err := s.rdb.ZAdd(ctx, s.quarantinedKey(), redis.Z{Score: float64(t.Quarantine.Since.UnixMilli()), Member: worker}).Err(); err != nil {
		return nil, false, fmt.Errorf("jobstore: quarantine %s: %w", worker, err)
	}
	return t.Quarantine, n == 1, nil
}

// Release lifts a worker's quarantine and clears its count of bad proofs.
// It returns the quarantine that was lifted (nil when there was none).
func (s *Store) Release(ctx context.Context, worker string) (*Quarantine, error) {
	if err := checkWorkerID(worker); err != nil {
		return nil, err
	}
	t, err := s.Trust(ctx, worker)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	pipe.Del(ctx, s.trustKey(worker))
	pipe.ZRem(ctx, s.quarantinedKey(), worker)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("jobstore: release %s: %w", worker, err)
	}
	return t.Quarantine, nil
}

// Trust reads a worker's trust record (zero counts and no quarantine for a
// worker without one).
func (s *Store) Trust(ctx context.Context, worker string) (WorkerTrust, error) {
	if err := checkWorkerID(worker); err != nil {
		return WorkerTrust{}, err
	}
	m, err := s.rdb.HGetAll(ctx, s.trustKey(worker)).Result()
	if err != nil {
		return WorkerTrust{}, fmt.Errorf("jobstore: trust of %s: %w", worker, err)
	}
	return decodeTrust(worker, m), nil
}

func decodeTrust(id string, m map[string]string) WorkerTrust {
	t := WorkerTrust{ID: id, LastBad: m["last_bad"]}
	t.BadProofs, _ = strconv.Atoi(m["bad"])
	if ms, err := strconv.ParseInt(m["quarantined_ms"], 10, 64); err == nil {
		t.Quarantine = &Quarantine{Reason: m["reason"], Since: time.UnixMilli(ms), By: m["by"]}
	}
	return t
}

// Trusts reads the trust records of the given workers and of every
// quarantined worker, by id.
func (s *Store) Trusts(ctx context.Context, workers []string) (map[string]WorkerTrust, error) {
	ids, err := s.rdb.ZRange(ctx, s.quarantinedKey(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("jobstore: quarantined workers: %w", err)
	}
	for _, w := range workers {
		if !slices.Contains(ids, w) {
			ids = append(ids, w)
		}
	}
	out := make(map[string]WorkerTrust, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.trustKey(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("jobstore: trust records: %w", err)
	}
	var stale []any
	for i, c := range cmds {
		t := decodeTrust(ids[i], c.Val())
		out[ids[i]] = t
		if t.Quarantine == nil && !slices.Contains(workers, ids[i]) {
			stale = append(stale, ids[i]) // released between the two reads
		}
	}
	if len(stale) > 0 {
		s.rdb.ZRem(ctx, s.quarantinedKey(), stale...)
	}
	return out, nil
}

// PublishKey records a shape's verifying key as the coordinator uses it,
// for ttl (workers compare their proving keys with it).
func (s *Store) PublishKey(ctx context.Context, shape string, k CoordinatorKey, ttl time.Duration) error {
	b, err := json.Marshal(k)
	if err != nil {
		return fmt.Errorf("jobstore: publish key of %s: %w", shape, err)
	}
	if err := s.rdb.Set(ctx, s.vkKey(shape), b, ttl).Err(); err != nil {
		return fmt.Errorf("jobstore: publish key of %s: %w", shape, err)
	}
	return nil
}

// CoordinatorKeys returns the published verifying keys of the shapes that
// have one.
func (s *Store) CoordinatorKeys(ctx context.Context, shapes []string) (map[string]CoordinatorKey, error) {
	out := map[string]CoordinatorKey{}
	if len(shapes) == 0 {
		return out, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(shapes))
	for i, sh := range shapes {
		cmds[i] = pipe.Get(ctx, s.vkKey(sh))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("jobstore: coordinator keys: %w", err)
	}
	for i, c := range cmds {
		b, err := c.Bytes()
		if err != nil {
			continue
		}
		var k CoordinatorKey
		if err := json.Unmarshal(b, &k); err != nil {
			return nil, fmt.Errorf("jobstore: coordinator key of %s: %w", shapes[i], err)
		}
		out[shapes[i]] = k
	}
	return out, nil
}

// KeyMismatchReason is the quarantine reason of a worker whose proving key
// for shape (fingerprint have) is not the coordinator's verifying key.
func KeyMismatchReason(shape, have string, ck CoordinatorKey) string {
	return fmt.Sprintf("its parameters for shape %s have verifying key %s, but the coordinator verifies with %s (%s): they come from another setup and its proofs would fail verification; give the worker the parameters made with the coordinator's .vk, then release it",
		shape, have, ck.Fingerprint, ck.File)
}
