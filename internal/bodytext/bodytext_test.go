package bodytext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 300)
	tests := []struct {
		name, body, contentType, want string
	}{
		{"plain", "  unauthorized\n", "text/plain", "unauthorized"},
		{"json", `{"error":"invalid_token"}`, "application/json", `{"error":"invalid_token"}`},
		{"control characters", "bad\r\n\x1b[31mred\tline", "", "bad [31mred line"},
		{"html by type", `<html><head><title>401 Authorization Required</title><style>body{color:red}</style></head>` +
			`<body><script>var x = "<b>";</script><h1>Authorization &amp; more</h1><!-- a <comment> --><p>nginx</p></body></html>`,
			"text/html; charset=utf-8", "401 Authorization Required Authorization & more nginx"},
		{"html sniffed", "<!DOCTYPE html>\n<HTML><BODY><SCRIPT>alert(1)</SCRIPT>Forbidden</BODY></HTML>", "", "Forbidden"},
		{"not html", "a < b > c", "text/plain", "a < b > c"},
		{"invalid utf-8", "a\xffb", "", "a\uFFFDb"},
		{"clipped", long, "", strings.Repeat("é", (Max-len("…"))/2) + "…"},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Excerpt([]byte(tt.body), tt.contentType); got != tt.want {
				t.Errorf("Excerpt = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzExcerpt(f *testing.F) {
	f.Add([]byte("<html><script>x</script>hi</html>"), "text/html")
	f.Add([]byte("plain\x00text"), "")
	f.Add([]byte("<!doctype html><style"), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		got := Excerpt(body, contentType)
		if len(got) > Max || !utf8.ValidString(got) {
			t.Fatalf("Excerpt(%q) = %q: %d bytes, valid UTF-8 %v", body, got, len(got), utf8.ValidString(got))
		}
	})
}
