package hist

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestIndexBoundsAgree(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 129, 255, 256, 257, 1000, 1 << 20, 123456789, 1<<62 + 12345} {
		low, width := bounds(index(v))
		if v < low || v >= low+width {
			t.Errorf("value %d in bucket %d = [%d, %d)", v, index(v), low, low+width)
		}
		if width > 1 && float64(width)/float64(low) > 1.0/subBuckets+1e-12 {
			t.Errorf("value %d: bucket width %d is more than 1/%d of %d", v, width, subBuckets, low)
		}
	}
}

func TestQuantilesWithinPrecision(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		gen  func() int64
	}{
		{"uniform µs", func() int64 { return 1000 + r.Int64N(100_000) }},
		{"exponential", func() int64 { return int64(r.ExpFloat64() * 50_000) }},
		{"bimodal", func() int64 {
			if r.IntN(100) == 0 {
				return 5_000_000 + r.Int64N(1000)
			}
			return 20_000 + r.Int64N(1000)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h H
			vals := make([]int64, 100_000)
			for i := range vals {
				vals[i] = c.gen()
				h.Record(vals[i])
			}
			slices.Sort(vals)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				want := vals[int(q*float64(len(vals))+0.5)-1]
				got := h.Quantile(q)
				if d := float64(got-want) / float64(want); d > 1.0/subBuckets || d < -1.0/subBuckets {
					t.Errorf("q%.3f = %d, exact %d (off by %.2f %%)", q, got, want, 100*d)
				}
			}
			if h.Max() != vals[len(vals)-1] {
				t.Errorf("max %d, want %d", h.Max(), vals[len(vals)-1])
			}
		})
	}
}

func TestMergeAndEmpty(t *testing.T) {
	var a, b, empty H
	if empty.Quantile(0.5) != 0 || empty.Count() != 0 {
		t.Fatal("empty histogram is not empty")
	}
	for i := int64(1); i <= 100; i++ {
		a.Record(i)
		b.Record(1000 * i)
	}
	a.Merge(&b)
	a.Merge(&empty)
	if a.Count() != 200 || a.Max() != 100_000 {
		t.Fatalf("merged count %d max %d", a.Count(), a.Max())
	}
	if got := a.Quantile(0.5); got != 100 {
		t.Errorf("median of merged = %d, want 100", got)
	}
	if got := a.Quantile(1); got != 100_000 {
		t.Errorf("q1 = %d, want the max", got)
	}
}
