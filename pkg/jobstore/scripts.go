package jobstore

import "github.com/redis/go-redis/v9"

// createScript: KEYS job. ARGV ttl_ms, then field, value pairs.
// Creates the job hash unless it exists. Returns 1 if created, 0 if it existed.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)

// beginScript: KEYS job, attempts, proofs, events.
// ARGV partition, attempt, worker, now_ms, ttl_ms, channel.
// Registers attempt as the partition's current one unless a newer attempt
// exists. Returns {outcome, state}: outcome is ok, stale, already_done,
// closed or missing; or {'out_of_range', partitions} for a partition the
// job does not have.
var beginScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', ''} end
local parts = tonumber(redis.call('HGET', KEYS[1], 'partitions') or '0')
if tonumber(ARGV[1]) >= parts then return {'out_of_range', tostring(parts)} end
if state == 'cancelled' or state == 'failed' or state == 'done' then return {'closed', state} end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return {'already_done', state} end
local cur = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local a = tonumber(ARGV[2])
if a < cur then return {'stale', state} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if state == 'queued' then
  redis.call('HSET', KEYS[1], 'state', 'proving', 'proving_ms', ARGV[4])
  state = 'proving'
end
redis.call('HSET', KEYS[1], 'updated_ms', ARGV[4])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', '512', '*', 'type', 'begin', 'partition', ARGV[1], 'attempt', ARGV[2], 'worker', ARGV[3])
for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
redis.call('PUBLISH', ARGV[6], 'begin')
return {'ok', state}
`)

// completeScript: KEYS job, attempts, proofs, events, provers.
// ARGV partition, attempt, proof, worker, now_ms, ttl_ms, channel,
//
//	queue_us, synth_us, prove_us, lock_us, verify_us.
//
// The atomic complete-partition step. Returns {outcome, done, partitions,
// state}: outcome is accepted, duplicate, stale, closed, missing or
// out_of_range (a partition the job does not have: nothing is written).
var completeScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing', 0, 0, ''} end
local parts = tonumber(redis.call('HGET', KEYS[1], 'partitions') or '0')
local done = tonumber(redis.call('HGET', KEYS[1], 'done') or '0')
if tonumber(ARGV[1]) >= parts then return {'out_of_range', done, parts, state} end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return {'duplicate', done, parts, state} end
if state ~= 'queued' and state ~= 'proving' then return {'closed', done, parts, state} end
local cur = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local a = tonumber(ARGV[2])
if a < cur then return {'stale', done, parts, state} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[4])
done = redis.call('HINCRBY', KEYS[1], 'done', 1)
redis.call('HINCRBY', KEYS[1], 't_queue_us', ARGV[8])
redis.call('HINCRBY', KEYS[1], 't_synth_us', ARGV[9])
redis.call('HINCRBY', KEYS[1], 't_prove_us', ARGV[10])
redis.call('HINCRBY', KEYS[1], 't_lock_us', ARGV[11])
redis.call('HINCRBY', KEYS[1], 't_verify_us', ARGV[12])
redis.call('HSET', KEYS[1], 'updated_ms', ARGV[5])
if state == 'queued' then
  redis.call('HSET', KEYS[1], 'proving_ms', ARGV[5])
  state = 'proving'
end
if done >= parts then
  state = 'assembling'
  redis.call('HSET', KEYS[1], 'assembling_ms', ARGV[5])
end
redis.call('HSET', KEYS[1], 'state', state)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', '512', '*', 'type', 'complete', 'partition', ARGV[1], 'attempt', ARGV[2], 'worker', ARGV[4])
for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], ARGV[6]) end
redis.call('PUBLISH', ARGV[7], 'complete')
return {'accepted', done, parts, state}
`)

// transitionScript: KEYS job, events.
// ARGV to_state, allowed_from (comma separated), now_ms, ttl_ms, channel,
//
//	event message, then field, value pairs to set.
//
// Returns {1, old_state} when it moved the job, {0, state} when the job
// was not in an allowed state, {-1, ”} when missing.
var transitionScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {-1, ''} end
local allowed = false
for s in string.gmatch(ARGV[2], '[^,]+') do if s == state then allowed = true end end
if not allowed then return {0, state} end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'updated_ms', ARGV[3])
for i = 7, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', '512', '*', 'type', ARGV[1], 'from', state, 'message', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[1])
return {1, state}
`)
