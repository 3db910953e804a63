package shared

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/gateway/limit"
)

// Limits returns the token buckets of package limit kept in the store:
// the replicas that share it share their rate limits.
func (s *Store) Limits() limit.Store { return limitStore{s} }

type limitStore struct{ s *Store }

// takeScript takes one token from every bucket KEYS names, or from none,
// in one round trip. ARGV[1] is the time in microseconds (the replica's:
// a replica whose clock is behind does not take time back); then, for
// each key, the bucket's rate in tokens a microsecond, its burst, and
// how long it lives unused in milliseconds (the time it takes to fill:
// after it, a bucket is the same as one never used). Each bucket is a
// hash of its tokens (n) and the time they were counted (at). It returns
// the 1-based index of the first bucket without a token (0 for none)
// and the microseconds until every bucket has one.
var takeScript = &luaScript{keys: -1, src: `
local now = tonumber(ARGV[1])
local refused, wait = 0, 0
local n, at = {}, {}
for i = 1, #KEYS do
  local rate, burst = tonumber(ARGV[3*i-1]), tonumber(ARGV[3*i])
  local v = redis.call('HMGET', KEYS[i], 'n', 'at')
  n[i], at[i] = tonumber(v[1]), tonumber(v[2])
  if n[i] == nil or at[i] == nil then
    n[i], at[i] = burst, now
  end
  if now > at[i] then
    n[i] = math.min(burst, n[i] + (now - at[i]) * rate)
    at[i] = now
  end
  if n[i] < 1 then
    if refused == 0 then refused = i end
    wait = math.max(wait, math.floor((1 - n[i]) / rate + 0.5))
  end
end
if refused == 0 then
  for i = 1, #KEYS do
    redis.call('HSET', KEYS[i], 'n', string.format('%.17g', n[i] - 1), 'at', string.format('%.0f', at[i]))
    redis.call('PEXPIRE', KEYS[i], ARGV[3*i+1])
  end
end
return {refused, wait}
`}

// Take takes a token from every bucket, or from none (see limit.Store).
// The buckets' keys are digests: a caller's name may hold any byte.
func (l limitStore) Take(ctx context.Context, now time.Time, buckets []limit.Bucket) (int, time.Duration, error) {
	keys := make([]string, len(buckets))
	args := make([]any, 0, 1+3*len(buckets))
	args = append(args, now.UnixMicro())
	for i, b := range buckets {
		sum := sha256.Sum256([]byte(b.Key))
		keys[i] = l.s.prefix + "limit:" + hex.EncodeToString(sum[:16])
		ttl := b.Refill() + time.Second
		args = append(args, b.Rate/1e6, b.Burst, ttl.Milliseconds())
	}
	res, err := redis.Int64s(l.s.script(ctx, takeScript, keysArgs(keys, args...)...))
	if err != nil {
		return 0, 0, fmt.Errorf("redis: taking from the shared rate limits: %w", err)
	}
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("redis: the rate limit script answered %d values", len(res))
	}
	return int(res[0]) - 1, time.Duration(res[1]) * time.Microsecond, nil
}

// Slots returns the counts of calls in flight of package limit kept in
// the store: the replicas that share it share their concurrency limits.
func (s *Store) Slots() limit.SlotStore { return slotStore{s} }

type slotStore struct{ s *Store }

// acquireScript counts a call (ARGV[3], its id) in every sorted set KEYS
// names, or in none: each holds the ids of the calls in flight scored by
// when their count lapses (ARGV[2], milliseconds; ARGV[1] is now), and
// those lapsed are dropped first; ARGV[3+i] is KEYS[i]'s limit, the last
// ARGV how long a set lives unused. It returns the 1-based index of the
// first set at its limit, 0 when the call is counted.
var acquireScript = &luaScript{keys: -1, src: `
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3+i]) then
    return i
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[i], ARGV[#ARGV])
end
return 0
`}

// releaseScript ends the count of call ARGV[1] in every set KEYS names.
var releaseScript = &luaScript{keys: -1, src: `
for i = 1, #KEYS do
  redis.call('ZREM', KEYS[i], ARGV[1])
end
return 0
`}

func (st slotStore) keys(slots []limit.Slot) []string {
	keys := make([]string, len(slots))
	for i, sl := range slots {
		sum := sha256.Sum256([]byte(sl.Key))
		keys[i] = st.s.prefix + "limit-calls:" + hex.EncodeToString(sum[:16])
	}
	return keys
}

// Acquire counts the call id in every slot, or in none (see
// limit.SlotStore), in one round trip.
func (st slotStore) Acquire(ctx context.Context, now time.Time, id string, slots []limit.Slot, lease time.Duration) (int, error) {
	args := make([]any, 0, 4+len(slots))
	args = append(args, now.UnixMilli(), now.Add(lease).UnixMilli(), id)
	for _, sl := range slots {
		args = append(args, sl.Limit)
	}
	args = append(args, lease.Milliseconds())
	n, err := redis.Int(st.s.script(ctx, acquireScript, keysArgs(st.keys(slots), args...)...))
	if err != nil {
		return 0, fmt.Errorf("redis: counting a call in the shared concurrency limits: %w", err)
	}
	return n - 1, nil
}

// Release ends the call's counts.
func (st slotStore) Release(ctx context.Context, id string, slots []limit.Slot) error {
	if _, err := st.s.script(ctx, releaseScript, keysArgs(st.keys(slots), id)...); err != nil {
		return fmt.Errorf("redis: ending a call's count in the shared concurrency limits: %w", err)
	}
	return nil
}
