package jsonfast

import (
	"math/rand/v2"
	"testing"
)

func plainPrefixRef(b []byte) int {
	for i, c := range b {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return i
		}
	}
	return len(b)
}

// plainString returns n plain bytes.
func plainString(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// checkByteAt checks plainPrefix of the plain string b with each of
// values put at b[pos] in turn.
func checkByteAt(t *testing.T, b []byte, pos int, values []byte) {
	t.Helper()
	old := b[pos]
	defer func() { b[pos] = old }()
	for _, c := range values {
		b[pos] = c
		want := len(b)
		if plainPrefixRef(b[pos:pos+1]) == 0 {
			want = pos
		}
		if got := plainPrefix(b); got != want {
			t.Fatalf("len %d, byte %#x at %d: plainPrefix = %d, want %d", len(b), c, pos, got, want)
		}
	}
}

// Every byte value, at every position of strings of every length around
// the vector block sizes.
func TestPlainPrefix(t *testing.T) {
	every := make([]byte, 256)
	for c := range every {
		every[c] = byte(c)
	}
	for n := 0; n <= 200; n++ {
		b := plainString(n)
		if got := plainPrefix(b); got != n {
			t.Fatalf("plain string of %d: plainPrefix = %d", n, got)
		}
		for pos := range n {
			checkByteAt(t, b, pos, every)
		}
	}
}

// The same for lengths around where long strings are scanned
// differently (AVX2 on amd64): one byte of each class, at the ends and at
// a stride through every block offset.
func TestPlainPrefixLong(t *testing.T) {
	for _, n := range []int{16<<10 - 1, 16 << 10, 16<<10 + 15, 16<<10 + 31, 16<<10 + 33, 64<<10 + 17} {
		b := plainString(n)
		if got := plainPrefix(b); got != n {
			t.Fatalf("plain string of %d: plainPrefix = %d", n, got)
		}
		for pos := range n {
			if pos <= 100 || pos >= n-100 || pos%61 == 0 {
				checkByteAt(t, b, pos, []byte{0, 0x1f, 0x20, '"', '\\', 0x7f, 0x80, 0xff})
			}
		}
	}
}

func FuzzPlainPrefix(f *testing.F) {
	f.Add([]byte(`hello "world"`))
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456789abcdef\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := plainPrefix(b), plainPrefixRef(b); got != want {
			t.Fatalf("plainPrefix(%q) = %d, want %d", b, got, want)
		}
	})
}

func BenchmarkPlainPrefix64K(b *testing.B) {
	s := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range s {
		s[i] = byte('a' + r.IntN(26))
	}
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if plainPrefix(s) != len(s) {
			b.Fatal("not plain")
		}
	}
}

func BenchmarkCleanString64K(b *testing.B) {
	s := make([]byte, 64<<10)
	for i := range s {
		s[i] = byte('a' + i%26)
	}
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if !CleanString(s) {
			b.Fatal("not clean")
		}
	}
}
