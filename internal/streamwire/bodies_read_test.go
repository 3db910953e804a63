package streamwire

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// TestBodyPoolRead: bodies of every size around the thresholds come out
// whole, read in pieces, whether they are as long as announced, shorter,
// or come with no length.
func TestBodyPoolRead(t *testing.T) {
	var p BodyPool
	for _, n := range []int{0, 1, firstRead - 1, firstRead, firstRead + 1, 3*firstRead + 5, MaxPooledBody, MaxPooledBody + 3, 5 << 20} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(rand.IntN(256))
		}
		for _, tt := range []struct {
			name      string
			announced int64
			sent      int
		}{{"exact", int64(n), n}, {"short", int64(n), n / 2}, {"unknown", -1, n}} {
			got, h, err := p.Read(iotest.HalfReader(bytes.NewReader(body[:tt.sent])), tt.announced, 8<<20)
			if err != nil || !bytes.Equal(got, body[:tt.sent]) {
				t.Fatalf("%d bytes, %s: got %d bytes, %v", n, tt.name, len(got), err)
			}
			p.Put(got, h)
		}
	}
}
