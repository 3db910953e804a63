package limit

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/ferrymcp/ferry/config"
)

// A Slot is one count of calls in flight a call takes: Key's, bounded
// by Limit.
type Slot struct {
	Key   string
	Limit int
}

// A SlotStore counts the calls in flight of every replica. Acquire
// counts the call id in every slot of slots, or, when one of them is at
// its limit, in none: it returns -1, or the index of the first slot at
// its limit. A count lasts until Release, or lease after Acquire: a
// replica that stopped without releasing its calls' counts does not hold
// them longer than a call may last.
type SlotStore interface {
	Acquire(ctx context.Context, now time.Time, id string, slots []Slot, lease time.Duration) (refused int, err error)
	Release(ctx context.Context, id string, slots []Slot) error
}

// releaseTimeout bounds the release of a call's shared counts, which
// runs after the call, whatever became of its context.
const releaseTimeout = 2 * time.Second

// acquire counts a call in the concurrency limits of slots (named are
// their rules): in the shared store, else locally or as redisDown says.
// The function it returns ends the call's counts.
func (l *Limiter) acquire(ctx context.Context, p *Policy, slots []Slot, named []*rule) (func(), *Refusal) {
	now := time.Now()
	if l.slots != nil && l.down.ask(now) {
		id := rand.Text()
		i, err := l.slots.Acquire(ctx, now, id, slots, l.lease)
		if err == nil {
			l.storeAnswered()
			if i >= 0 {
				return nil, &Refusal{Rule: named[i].name, Concurrency: slots[i].Limit}
			}
			return func() { l.releaseShared(id, slots) }, nil
		}
		l.storeFailed(p, err, now)
	}
	if l.slots != nil {
		switch p.redisDown {
		case config.RedisDownAllow:
			return func() {}, nil
		case config.RedisDownDeny:
			return nil, &Refusal{RetryAfter: time.Second, Unchecked: true}
		}
	}
	keys := make([]string, len(slots))
	limits := make([]int, len(slots))
	for i, s := range slots {
		keys[i], limits[i] = s.Key, s.Limit
	}
	if i := l.conc.acquire(keys, limits); i >= 0 {
		return nil, &Refusal{Rule: named[i].name, Concurrency: limits[i]}
	}
	return func() { l.conc.release(keys) }, nil
}

// releaseShared ends a call's shared counts; when the store cannot be
// reached, they end with their lease.
func (l *Limiter) releaseShared(id string, slots []Slot) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := l.slots.Release(ctx, id, slots); err != nil {
		l.log.Warn("limits: a call's count in the shared store ends with its lease", "error", err)
	}
}
