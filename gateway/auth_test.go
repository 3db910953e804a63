package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

func TestReadTokens(t *testing.T) {
	tests := []struct {
		name, file string
		want       []Token
		err        string
	}{
		{"one token a line", "# clients\nabc\n\n  def  \n", []Token{{Token: "abc"}, {Token: "def"}}, ""},
		{"callers and roles", "abc alice admin\tops\ndef bob\nghi\n", []Token{
			{Token: "abc", Caller: "alice", Roles: []string{"admin", "ops"}},
			{Token: "def", Caller: "bob", Roles: []string{}},
			{Token: "ghi"},
		}, ""},
		{"repeated token", "abc alice\nxyz\nabc bob\n", nil, "line 3 repeats the token of an earlier line"},
		{"none", "# nothing\n\n", nil, "no tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadTokens(strings.NewReader(tt.file))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "abc") {
					t.Fatalf("the error shows a token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tt.want, func(a, b Token) bool {
				return a.Token == b.Token && a.Caller == b.Caller && slices.Equal(a.Roles, b.Roles)
			}) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A token file's line names its caller and roles: middleware sees them
// as the request's Caller; a token of one field is known by its digest.
func TestBearerCallersNameCallers(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
			if c := ir.Caller(); c != nil && ir.Method == protocol.MethodToolsCall {
				mu.Lock()
				seen = append(seen, c.ID+"|"+c.Subject+"|"+strings.Join(c.Roles, ","))
				mu.Unlock()
			}
			return next(ctx, ir)
		}
	}
	up, _ := remote(t, "r", false)
	tokens, err := ReadTokens(strings.NewReader("alice-token alice admin ops\nbare-token\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, url := start(t, []*config.Server{up}, &Options{Auth: BearerCallers(tokens), Middleware: []intercept.Middleware{record}})
	ctx := ctxT(t)
	for _, tok := range []string{"alice-token", "bare-token"} {
		c, err := client.Connect(ctx, &streamable.Transport{URL: url + "/mcp", Header: http.Header{"Authorization": {"Bearer " + tok}}},
			&client.Options{ProtocolVersion: protocol.Version20260728})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		text(t)(c.Call(ctx, "r__echo", map[string]string{"message": "m"}))
	}
	want := []string{
		"alice|alice|admin,ops",
		// sha256("bare-token")
		"token-sha256:d300834f86e0d535a0cbb861d176c4d69efefb7100083327b90a1f88a4f40fe6||",
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, want) {
		t.Fatalf("callers %q, want %q", seen, want)
	}
}
