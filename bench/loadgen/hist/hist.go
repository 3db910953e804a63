// Package hist is a log-linear latency histogram in the manner of HDR
// histograms: values below 128 are counted exactly, and every power of two
// above is split into 128 equal buckets, so any recorded value is known to
// within 1/128 (0.8 %) whatever its size, in a fixed 64 KiB of counters and
// without allocation per value. Values are nanoseconds in this benchmark.
package hist

import "math/bits"

const (
	subBits    = 7
	subBuckets = 1 << subBits
	// buckets covers every int64: 57 powers of two above the exact range.
	buckets = (64 - subBits) * subBuckets
)

// H is one histogram. The zero value is empty and ready; it is not safe
// for concurrent use (give each worker its own and Merge them).
type H struct {
	counts [buckets]uint64
	n      uint64
	min    int64
	max    int64
}

func index(v int64) int {
	e := max(bits.Len64(uint64(v))-subBits-1, 0)
	return e<<subBits + int(v>>e)
}

// bounds returns the lowest value of bucket i and the bucket's width.
func bounds(i int) (low, width int64) {
	e := max(i>>subBits-1, 0)
	return int64(i-e<<subBits) << e, int64(1) << e
}

// Record counts one value; negative values count as 0.
func (h *H) Record(v int64) {
	v = max(v, 0)
	h.counts[index(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.n++
	h.max = max(h.max, v)
}

// Merge adds every value of o to h.
func (h *H) Merge(o *H) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count is the number of values recorded.
func (h *H) Count() uint64 { return h.n }

// Max is the largest value recorded, exactly.
func (h *H) Max() int64 { return h.max }

// Quantile returns the value below or at which a fraction q (0..1) of the
// recorded values lie: the middle of the bucket holding the value of that
// rank, kept within the recorded minimum and maximum. It is 0 when empty.
func (h *H) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, width := bounds(i)
			return min(max(low+width/2, h.min), h.max)
		}
	}
	return h.max
}
