package gateway

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// passOn adapts an undecoded result as result does a decoded one, and
// leaves one that needs nothing as it came.
func TestPassOn(t *testing.T) {
	stamp := stampOf(protocol.Implementation{Name: "gw", Version: "1"})
	info := `"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1"}`
	up := `"io.modelcontextprotocol/serverInfo":{"name":"up","version":"9"}`
	for _, tc := range []struct {
		name, in       string
		stateless, old bool
		want           string // "" when it falls back
		isError        bool
	}{
		{"legacy as it came", `{"content":[{"type":"text","text":"x"}]}`, false, false, `{"content":[{"type":"text","text":"x"}]}`, false},
		{"stateless upstream to legacy", `{"resultType":"complete","_meta":{` + up + `},"content":[],"isError":true}`, false, false,
			`{"content":[],"isError":true}`, true},
		{"other _meta kept", `{ "_meta" : { ` + up + ` , "k":[1,{"a":"}"}] } , "content":[] }`, false, false,
			`{"_meta":{"k":[1,{"a":"}"}]},"content":[]}`, false},
		{"structuredContent dropped before 2025-06-18", `{"content":[],"structuredContent":{"a":1}}`, false, true, `{"content":[]}`, false},
		{"structuredContent kept", `{"content":[],"structuredContent":{"a":1}}`, false, false, `{"content":[],"structuredContent":{"a":1}}`, false},
		{"stateless client gets the gateway's", `{"resultType":"complete","_meta":{` + up + `,"t":"p"},"content":[]}`, true, false,
			`{"resultType":"complete","_meta":{` + info + `,"t":"p"},"content":[]}`, false},
		{"stateless client, legacy upstream", `{"content":[]}`, true, false, `{"resultType":"complete","_meta":{` + info + `},"content":[]}`, false},
		{"stateless client, empty result", `{}`, true, false, `{"resultType":"complete","_meta":{` + info + `}}`, false},
		{"empty", `{}`, false, false, `{}`, false},
		{"tool error as it came", `{"content":[],"isError":true}`, false, false, `{"content":[],"isError":true}`, true},
		{"no tool error", `{"isError":false,"content":[{"type":"text","text":"\"isError\":true"}]}`, true, false,
			`{"resultType":"complete","_meta":{` + info + `},"isError":false,"content":[{"type":"text","text":"\"isError\":true"}]}`, false},
		{"escaped name", `{"result\u0054ype":"complete","content":[]}`, false, false, "", false},
		{"not an object", `[1]`, false, false, "", false},
		{"escaped _meta member", `{"_meta":{"\u0069o.modelcontextprotocol/serverInfo":{}},"content":[]}`, false, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s []byte
			if tc.stateless {
				s = stamp
			}
			out, isError, ok := passOn([]byte(tc.in), s, tc.old)
			if tc.want == "" {
				if ok {
					t.Fatalf("spliced %s into %s; want the fallback", tc.in, out)
				}
				return
			}
			if !ok || string(out) != tc.want || isError != tc.isError {
				t.Fatalf("passOn(%s) = %s, isError %v, %v; want %s, isError %v", tc.in, out, isError, ok, tc.want, tc.isError)
			}
			if !jsontext.Value(out).IsValid() {
				t.Errorf("%s is not valid JSON", out)
			}
		})
	}
}

// A long result that a legacy client gets as it came, or without the
// members a stateless upstream put first, is not copied.
func TestPassOnDoesNotCopy(t *testing.T) {
	content := `"content":[{"type":"text","text":"` + strings.Repeat("x", 64<<10) + `"}]`
	for _, in := range []string{
		`{` + content + `}`,
		`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}, ` + content + `}`,
	} {
		raw := []byte(in)
		out, _, ok := passOn(raw, nil, false)
		if !ok || string(out) != `{`+content+`}` {
			t.Fatalf("passOn gave %.80s…", out)
		}
		if &out[len(out)-1] != &raw[len(raw)-1] {
			t.Error("the result was copied")
		}
	}
}

// FuzzPassOn: whatever valid object comes, passOn makes valid JSON or
// falls back, and drops what it must.
func FuzzPassOn(f *testing.F) {
	f.Add(`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"u"},"x":1},"content":[],"structuredContent":{}}`, true, false)
	f.Add(`{"content":[{"type":"text","text":"a\"b"}]}`, false, true)
	stamp := stampOf(protocol.Implementation{Name: "gw", Version: "1"})
	f.Fuzz(func(t *testing.T, in string, stateless, old bool) {
		var obj map[string]any
		if json.Unmarshal([]byte(in), &obj) != nil {
			return // the engine validated what passOn gets
		}
		var s []byte
		if stateless {
			s = stamp
		}
		out, isError, ok := passOn([]byte(in), s, old)
		if !ok {
			return
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("passOn(%s) = %s: %v", in, out, err)
		}
		meta, _ := got["_meta"].(map[string]any)
		if stateless != (got["resultType"] == protocol.ResultComplete) {
			t.Errorf("resultType in %s", out)
		}
		if si, ok := meta[protocol.MetaServerInfo].(map[string]any); (ok && si["name"] != "gw") || ok != stateless {
			t.Errorf("serverInfo in %s", out)
		}
		if _, ok := got["structuredContent"]; ok && old && !stateless {
			t.Errorf("structuredContent in %s", out)
		}
		if isError != (obj["isError"] == true) {
			t.Errorf("isError %v for %s", isError, in)
		}
	})
}
