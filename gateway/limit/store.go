package limit

import (
	"context"
	"math"
	"sync"
	"time"
)

// A Bucket is one token bucket a request takes a token from: it holds
// Burst tokens at most, and gains Rate tokens a second. A bucket not
// seen before is full.
type Bucket struct {
	Key   string
	Rate  float64
	Burst float64
}

// Refill is how long an empty bucket takes to fill: after that long
// unused it is full, the same as a bucket never used, and may be
// forgotten.
func (b *Bucket) Refill() time.Duration {
	return time.Duration(math.Ceil(b.Burst / b.Rate * float64(time.Second)))
}

// A Store keeps token buckets. Take takes one token from every bucket of
// buckets at time now, or, when one of them has less than a token, from
// none: it returns -1, or the index of the first bucket without a token
// and how long until every bucket has one. Buckets unused for as long as
// they take to fill may be forgotten.
type Store interface {
	Take(ctx context.Context, now time.Time, buckets []Bucket) (refused int, wait time.Duration, err error)
}

// Local is a [Store] in this process's memory.
type Local struct {
	mu    sync.Mutex
	m     map[string]*tokens
	sweep int // the size of m that makes the next Take drop full buckets
}

type tokens struct {
	n    float64
	at   time.Time
	full time.Time // when the bucket is full again: it may be dropped
}

// minSweep is the size below which the buckets are not swept.
const minSweep = 1024

// NewLocal returns an empty Local.
func NewLocal() *Local { return &Local{m: map[string]*tokens{}, sweep: minSweep} }

// Take takes a token from every bucket, or from none (see [Store]). It
// never fails.
func (s *Local) Take(_ context.Context, now time.Time, buckets []Bucket) (int, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	refused, wait := -1, time.Duration(0)
	for i := range buckets {
		t := s.fill(now, &buckets[i])
		if t.n >= 1 {
			continue
		}
		if refused < 0 {
			refused = i
		}
		wait = max(wait, untilToken(t.n, buckets[i].Rate))
	}
	if refused >= 0 {
		return refused, wait, nil
	}
	for i := range buckets {
		t := s.m[buckets[i].Key]
		t.n--
		t.full = now.Add(time.Duration((buckets[i].Burst - t.n) / buckets[i].Rate * float64(time.Second)))
	}
	return -1, 0, nil
}

// untilToken is how long a bucket of n tokens takes to have one, to the
// microsecond (rounded: the float's last bits are not a microsecond).
func untilToken(n, rate float64) time.Duration {
	return time.Duration(math.Round((1-n)/rate*1e6)) * time.Microsecond
}

// fill returns b's tokens as of now.
func (s *Local) fill(now time.Time, b *Bucket) *tokens {
	t := s.m[b.Key]
	if t == nil {
		s.prune(now)
		t = &tokens{n: b.Burst, at: now}
		s.m[b.Key] = t
	}
	if elapsed := now.Sub(t.at); elapsed > 0 {
		t.n = min(b.Burst, t.n+elapsed.Seconds()*b.Rate)
		t.at = now
	}
	return t
}

// prune drops the buckets that are full again when the map has doubled
// since it was last swept, so that it holds about as many buckets as
// are in use.
func (s *Local) prune(now time.Time) {
	if len(s.m) < s.sweep {
		return
	}
	for k, t := range s.m {
		if !now.Before(t.full) {
			delete(s.m, k)
		}
	}
	s.sweep = max(minSweep, 2*len(s.m))
}

// Len returns the number of buckets kept.
func (s *Local) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// concurrency counts the calls in flight of each key.
type concurrency struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire counts one call for every key, each bounded by its limit, or
// for none: it returns the index of the first key at its limit, or -1.
func (c *concurrency) acquire(keys []string, limits []int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range keys {
		if c.n[k] >= limits[i] {
			return i
		}
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	for _, k := range keys {
		c.n[k]++
	}
	return -1
}

// release ends a call counted by acquire.
func (c *concurrency) release(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if c.n[k]--; c.n[k] <= 0 {
			delete(c.n, k)
		}
	}
}
