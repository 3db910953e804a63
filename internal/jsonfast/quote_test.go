package jsonfast

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

var quoteCases = []string{
	"", "a", "hello, world", strings.Repeat("x", 1000), "tab\there", "quote\"and\\back",
	"ctl\x00\x01\x1f\x7f", "<html>&", "héllo wörld ☃ 😀", "\u2028\u2029", strings.Repeat("ab\"c", 100),
	"line1\nline2\r\n", strings.Repeat("é", 33) + "\x01",
}

// AppendQuote writes exactly what json v2 writes.
func TestAppendQuoteMatchesV2(t *testing.T) {
	for _, s := range quoteCases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendQuote(nil, s)
		if err != nil || string(got) != string(want) {
			t.Errorf("AppendQuote(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	if _, err := AppendQuote(nil, "bad \xff utf8"); err != ErrInvalidUTF8 {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

func TestSimpleEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`"abc"`, 5}, {`"abc" ,`, 5}, {`"a\nb"`, 0}, {`"unterminated`, 0}, {`abc`, 0}, {`""`, 2},
		{`"` + strings.Repeat("y", 70) + `"`, 72}, {`"héllo"`, 8}, {"\"ctl\x01\"", 0},
	} {
		if got := SimpleEnd([]byte(tc.in)); got != tc.want {
			t.Errorf("SimpleEnd(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func FuzzAppendQuote(f *testing.F) {
	for _, s := range quoteCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := AppendQuote(nil, s)
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("invalid UTF-8 %q accepted", s)
			}
			return
		}
		want, _ := json.Marshal(s)
		if err != nil || string(got) != string(want) {
			t.Fatalf("AppendQuote(%q) = %s, %v; want %s", s, got, err, want)
		}
		if n := SimpleEnd(got); n != 0 {
			var back string
			if json.Unmarshal(got[:n], &back) != nil || back != s || n != len(got) {
				t.Fatalf("SimpleEnd(%s) = %d but it does not hold %q", got, n, s)
			}
		}
		if _, err := jsontext.AppendUnquote(nil, got); err != nil {
			t.Fatalf("%s does not unquote: %v", got, err)
		}
	})
}

func BenchmarkAppendQuote64K(b *testing.B) {
	s := strings.Repeat("0123456789abcdef", 4096)
	buf := make([]byte, 0, len(s)+2)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendQuote(buf[:0], s)
	}
}

func BenchmarkV2Quote64K(b *testing.B) {
	s := strings.Repeat("0123456789abcdef", 4096)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		json.Marshal(s)
	}
}
