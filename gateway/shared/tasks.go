package shared

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/gateway"
)

// The gateway's tasks ([gateway.TaskStore]), in encoding/json (which
// writes a time.Duration as its nanoseconds): each task a hash (its
// status, and its record as JSON) that expires with the task; the tasks
// of each owner a sorted set by creation, bounded, which expires with the
// last of them; each replica's lease a key that expires unless renewed.
// A task record holds the owner's name (a caller's id, or the digest of a
// session id), never a session id or a credential.

func (s *Store) taskKey(id string) string { return s.prefix + "task:" + id }

func (s *Store) ownerKey(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return s.prefix + "tasks:" + hex.EncodeToString(sum[:16])
}

func (s *Store) leaseKey(replica string) string { return s.prefix + "replica:" + replica }

// ownerTasks bounds the tasks one owner holds in Redis, running or
// finished and unexpired (a tenth of the in-process store's default).
const ownerTasks = 1000

// createTask stores a new task (KEYS[1]) in its owner's set (KEYS[2]),
// both to expire at ARGV[3] (Unix ms; the set with the last of its
// tasks). An owner at its share makes room with its oldest task gone or
// finished; with none, it is refused (0). ARGV: status, record, expiry,
// score (creation, Unix ms), id, share, the prefix of task keys.
var createTask = &luaScript{keys: 2, src: `
local n = redis.call('ZCARD', KEYS[2])
if n >= tonumber(ARGV[6]) then
  local room = false
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    local k = ARGV[7] .. id
    local s = redis.call('HGET', k, 'status')
    if not s or s == 'completed' or s == 'failed' or s == 'cancelled' then
      redis.call('DEL', k)
      redis.call('ZREM', KEYS[2], id)
      room = true
      break
    end
  end
  if not room then return 0 end
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'data', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
redis.call('PEXPIREAT', KEYS[2], ARGV[3], 'NX')
redis.call('PEXPIREAT', KEYS[2], ARGV[3], 'GT')
return 1`}

// CreateTask implements [gateway.TaskStore]: one round trip. Tasks
// without an owner (stateless, without a caller) share one set, and its
// bound.
func (s *Store) CreateTask(ctx context.Context, t *gateway.TaskRecord) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	n, err := redis.Int(s.script(ctx, createTask, s.taskKey(t.ID), s.ownerKey(t.Owner),
		t.Status, data, t.Expires().UnixMilli(), t.CreatedAt.UnixMilli(), t.ID, ownerTasks, s.taskKey("")))
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("too many tasks: you hold %d running, the most one client may", ownerTasks)
	}
	return nil
}

// updateTask replaces a task's record unless it is finished or gone,
// keeping its expiry.
var updateTask = &luaScript{keys: 1, src: `
local s = redis.call('HGET', KEYS[1], 'status')
if not s then return -1 end
if s == 'completed' or s == 'failed' or s == 'cancelled' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'data', ARGV[2])
return 1`}

// UpdateTask implements [gateway.TaskStore]: one round trip.
func (s *Store) UpdateTask(ctx context.Context, t *gateway.TaskRecord) (bool, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return false, err
	}
	n, err := redis.Int(s.script(ctx, updateTask, s.taskKey(t.ID), t.Status, data))
	if err != nil {
		return false, fmt.Errorf("redis: %w", err)
	}
	return n == 1, nil
}

// GetTask implements [gateway.TaskStore]: one round trip.
func (s *Store) GetTask(ctx context.Context, id string) (*gateway.TaskRecord, error) {
	data, err := redis.Bytes(s.do(ctx, "HGET", s.taskKey(id), "data"))
	if errors.Is(err, redis.ErrNil) {
		return nil, gateway.ErrTaskNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	t := new(gateway.TaskRecord)
	if err := json.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("redis: task %s: %w", id, err)
	}
	return t, nil
}

// ListTasks implements [gateway.TaskStore]: two round trips. The cursor
// is the position of the page's first task among the owner's; tasks
// that expired meanwhile are dropped from the owner's set as they are
// met.
func (s *Store) ListTasks(ctx context.Context, owner, cursor string, limit int) ([]*gateway.TaskRecord, string, error) {
	if owner == "" {
		return nil, "", nil
	}
	start := int64(0)
	if cursor != "" {
		n, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || n < 0 {
			return nil, "", gateway.ErrTaskNotFound
		}
		start = n
	}
	owned := s.ownerKey(owner)
	ids, err := redis.Strings(s.do(ctx, "ZRANGE", owned, start, start+int64(limit)))
	if err != nil {
		return nil, "", fmt.Errorf("redis: %w", err)
	}
	next := ""
	if len(ids) > limit {
		ids, next = ids[:limit], strconv.FormatInt(start+int64(limit), 10)
	}
	recs, gone, err := s.tasks(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	if len(gone) > 0 {
		// Best effort: the next listing drops them if this fails.
		s.do(ctx, "ZREM", append([]any{owned}, gone...)...)
	}
	return recs, next, nil
}

// tasks reads the records of ids in one round trip, and names those
// gone.
func (s *Store) tasks(ctx context.Context, ids []string) ([]*gateway.TaskRecord, []any, error) {
	cmds := make([]command, len(ids))
	for i, id := range ids {
		cmds[i] = cmd("HGET", s.taskKey(id), "data")
	}
	replies, err := s.pipeline(ctx, cmds...)
	if err != nil {
		return nil, nil, fmt.Errorf("redis: %w", err)
	}
	var recs []*gateway.TaskRecord
	var gone []any
	for i, r := range replies {
		t := new(gateway.TaskRecord)
		data, err := redis.Bytes(r, nil)
		if err != nil || json.Unmarshal(data, t) != nil {
			gone = append(gone, ids[i])
			continue
		}
		recs = append(recs, t)
	}
	return recs, gone, nil
}

// Beat implements [gateway.TaskStore].
func (s *Store) Beat(ctx context.Context, replica string, ttl time.Duration) error {
	if _, err := s.do(ctx, "SET", s.leaseKey(replica), "1", "PX", max(ttl.Milliseconds(), 1)); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// Alive implements [gateway.TaskStore].
func (s *Store) Alive(ctx context.Context, replica string) (bool, error) {
	n, err := redis.Int(s.do(ctx, "EXISTS", s.leaseKey(replica)))
	if err != nil {
		return false, fmt.Errorf("redis: %w", err)
	}
	return n == 1, nil
}

var _ gateway.TaskStore = (*Store)(nil)
