package resourceserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSessionOwnerWithoutSubject: tokens that name no subject (a client
// acting on its own behalf) are told apart by their client: one client's
// legacy session is not another's to use. A user's session stays the
// user's through another client (the TypeScript SDK registers anew for a
// step-up).
func TestSessionOwnerWithoutSubject(t *testing.T) {
	is := newIssuer(t)
	p := newProtected(t, is)
	tokenOf := func(subject, client string) string {
		c := is.claims(p.resource)
		delete(c, "sub")
		if subject != "" {
			c["sub"] = subject
		}
		c["client_id"] = client
		return is.token(t, is.key, "k1", c)
	}
	send := func(token, sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, p.resource, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	tests := []struct {
		name          string
		opener, other string
		status        int
	}{
		{"another client, no subject", tokenOf("", "machine-a"), tokenOf("", "machine-b"), http.StatusNotFound},
		{"the same client, no subject", tokenOf("", "machine-a"), tokenOf("", "machine-a"), http.StatusOK},
		{"the same user through another client", tokenOf("carol", "first"), tokenOf("carol", "registered-anew"), http.StatusOK},
		{"another user through the same client", tokenOf("carol", "app"), tokenOf("dave", "app"), http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := send(tt.opener, "", initialize)
			sid := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != http.StatusOK || sid == "" {
				t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
			}
			if r := send(tt.other, sid, ping); r.StatusCode != tt.status {
				t.Errorf("ping in the session: %d, want %d", r.StatusCode, tt.status)
			}
		})
	}
}
