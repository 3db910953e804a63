package jsonfast

import (
	"fmt"
	"testing"
)

// The word-at-a-time path, as on other architectures.
func TestPlainPrefixPortable(t *testing.T) {
	defer func(v bool) { vectorPlain = v }(vectorPlain)
	vectorPlain = false
	TestPlainPrefix(t)
	TestStringEnd(t)
	TestSimpleEnd(t)
	TestAppendQuoteMatchesV2(t)
}

// Where AVX2 starts to pay: avx2Min.
func BenchmarkPlainPrefixAVX2(b *testing.B) {
	if !avx2Plain {
		b.Skip("no AVX2")
	}
	for _, n := range []int{256, 1 << 10, 4 << 10, 64 << 10} {
		s := make([]byte, n)
		for i := range s {
			s[i] = 'a' + byte(i%26)
		}
		for _, avx := range []bool{false, true} {
			b.Run(fmt.Sprintf("%d/avx2=%v", n, avx), func(b *testing.B) {
				defer func(v bool, m int) { avx2Plain, avx2Min = v, m }(avx2Plain, avx2Min)
				avx2Plain, avx2Min = avx, 0
				b.SetBytes(int64(n))
				for b.Loop() {
					if plainPrefixVector(s) != n {
						b.Fatal("not plain")
					}
				}
			})
		}
	}
}
