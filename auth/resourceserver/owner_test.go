package resourceserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSessionOwnerWithoutSubject: tokens that name no subject (a client
// acting on its own behalf) are told apart by their client: one client's
// legacy session is not another's to use.
func TestSessionOwnerWithoutSubject(t *testing.T) {
	is := newIssuer(t)
	p := newProtected(t, is)
	tokenOf := func(client string) string {
		c := is.claims(p.resource)
		delete(c, "sub")
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
	a, b := tokenOf("machine-a"), tokenOf("machine-b")
	resp := send(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if r := send(b, sid, ping); r.StatusCode != http.StatusNotFound {
		t.Errorf("client b used client a's session: %d", r.StatusCode)
	}
	if r := send(a, sid, ping); r.StatusCode != http.StatusOK {
		t.Errorf("client a's own session: %d", r.StatusCode)
	}
}
