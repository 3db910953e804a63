package rawbuf

import (
	"testing"
)

func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 7, 4096, 64 << 10, 1 << 20} {
		b := Make(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i := range b {
			b[i] = byte(i)
		}
		for i := range b {
			if b[i] != byte(i) {
				t.Fatalf("Make(%d): byte %d is %d after writing %d", n, i, b[i], byte(i))
			}
		}
		// Distinct calls give distinct memory.
		if n > 0 {
			c := Make(n)
			c[0] = b[0] + 1
			if b[0] == c[0] {
				t.Fatalf("Make(%d) returned shared memory", n)
			}
		}
	}
}

func BenchmarkMake64K(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Make(64 << 10)
	}
}

func BenchmarkMakeZeroed64K(b *testing.B) {
	b.ReportAllocs()
	var sink []byte
	for b.Loop() {
		sink = make([]byte, 64<<10)
	}
	_ = sink
}
