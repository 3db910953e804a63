package intercept_test

import (
	"context"
	"testing"

	"github.com/ferrymcp/ferry/intercept"
)

// TestClientKey: a request's client is its caller when the
// authentication named one, else its address, an IPv6 one by its /64.
func TestClientKey(t *testing.T) {
	ann := intercept.WithCaller(context.Background(), &intercept.Caller{ID: "ann"})
	tests := []struct {
		name string
		ctx  context.Context
		addr string
		want string
	}{
		{"caller", ann, "192.0.2.1:4000", "caller:ann"},
		{"IPv4", context.Background(), "192.0.2.1:4000", "addr:192.0.2.1"},
		{"IPv4 in IPv6", context.Background(), "[::ffff:192.0.2.1]:4000", "addr:192.0.2.1"},
		{"IPv6 by its /64", context.Background(), "[2001:db8:1:2:aaaa::1]:4000", "addr:2001:db8:1:2::/64"},
		{"no port", context.Background(), "pipe", "addr:pipe"},
		{"a stream", context.Background(), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := intercept.ClientKey(tt.ctx, tt.addr); got != tt.want {
				t.Errorf("ClientKey = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWithCallerNeedsID: a caller without a name is refused at once,
// rather than sharing what it opens with every other such caller.
func TestWithCallerNeedsID(t *testing.T) {
	for _, c := range []*intercept.Caller{nil, {Subject: "ann"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("WithCaller(%+v) did not panic", c)
				}
			}()
			intercept.WithCaller(context.Background(), c)
		}()
	}
	if c, ok := intercept.CallerFrom(context.Background()); ok || c != nil {
		t.Errorf("CallerFrom of a bare context = %v, %v", c, ok)
	}
}
