package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// TestCallToolRawResult: CallToolRaw's Result has the answer's JSON,
// whether it is a tool error, and, for an answer over Streamable HTTP
// (which lends the memory it read a large answer into), the Release that
// gives that memory back; after it, the next call's answer is read as
// before.
func TestCallToolRawResult(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "raw", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		if in.Message == "" {
			return "", errors.New("nothing to echo")
		}
		return in.Message, nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); h.Close() })
	big := strings.Repeat("x", 64<<10)
	for _, version := range []string{protocol.Version20260728, protocol.LatestLegacyVersion} {
		t.Run(version, func(t *testing.T) {
			c, err := client.Connect(t.Context(), &streamable.Transport{URL: ts.URL}, &client.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, tc := range []struct {
				message string
				isError bool
			}{{big, false}, {"", true}, {big, false}} {
				res, err := c.CallToolRaw(t.Context(), &protocol.CallToolParams{Name: "echo",
					Arguments: jsontext.Value(`{"message":"` + tc.message + `"}`)})
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := res.Value.(jsontext.Value)
				if res.IsError != tc.isError || !strings.Contains(string(raw), `"text":"`+tc.message) {
					t.Fatalf("message of %d bytes: IsError %v, result %.80s", len(tc.message), res.IsError, raw)
				}
				if len(tc.message) == len(big) && res.Release == nil {
					t.Errorf("a 64 KiB answer over Streamable HTTP came without its Release")
				}
				if res.Release != nil {
					res.Release()
				}
			}
		})
	}
}
