package jsonfast

import (
	stdjson "encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

var strictStrings = []string{
	`""`, `"a"`, `"plain ascii text"`, `"日本語 😀"`, `"\u00e9\n\t\"\\\/\b\f\r"`,
	`"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"x\ud800"`, `"\ud800\ud800"`,
	`"\ud83d\ude00\ud800"`, `"\x41"`, `"\u12"`, `"\u12g4"`, `"abc`, `"abc\`, `"\`,
	"\"a\x00b\"", "\"a\nb\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\"", "\"\xc3\x28\"",
	"\"\xed\xa0\x80\"", "\"\xc0\xaf\"", "\"\xf4\x90\x80\x80\"", "\"é\\n\xe2\x82\"",
	`"` + strings.Repeat("long plain text ", 200) + `"`,
	`"` + strings.Repeat("long text with escapes \\n and é ", 100) + `"`,
	`"` + strings.Repeat("x", 100) + "\xff" + `"`,
	`"` + strings.Repeat("x", 100) + `\ud800"`,
}

// checkScanString holds ScanString to json v2 (strict) and to
// encoding/json plus UTF-8 (lone surrogates allowed), for one token.
func checkScanString(t *testing.T, tok string) {
	t.Helper()
	b := []byte(tok)
	wantStrict := len(b) > 0 && b[0] == '"' && jsontext.Value(b).IsValid()
	wantLone := len(b) > 0 && b[0] == '"' && stdjson.Valid(b) && utf8.Valid(b)
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		wantStrict, wantLone = false, false // whitespace after the token, or no token
	}
	if len(b) == 0 || b[0] != '"' {
		return
	}
	for _, tc := range []struct {
		rules StringRules
		want  bool
	}{{CountRunes, wantStrict}, {0, wantStrict}, {LoneSurrogates, wantLone}, {LoneSurrogates | CountRunes, wantLone}} {
		end, escaped, runes, err := ScanString(b, 0, tc.rules)
		if got := err == nil && end == len(b); got != tc.want {
			t.Fatalf("ScanString(%q, rules %d) = end %d, %v; want valid %v", tok, tc.rules, end, err, tc.want)
		}
		if err != nil {
			if err.Offset < 0 || err.Offset > len(b) || err.What == "" {
				t.Fatalf("ScanString(%q): error %+v", tok, err)
			}
			continue
		}
		if end != len(b) {
			continue // a whole token before the end
		}
		if escaped != strings.Contains(tok, `\`) {
			t.Fatalf("ScanString(%q): escaped %v", tok, escaped)
		}
		var s string
		if err := stdjson.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if got := string(AppendUnescaped(nil, b)); got != s {
			t.Fatalf("AppendUnescaped(%q) = %q, want %q", tok, got, s)
		}
		want := 0
		if tc.rules&CountRunes != 0 {
			want = utf8.RuneCountInString(s)
		}
		if runes != want {
			t.Fatalf("ScanString(%q, rules %d): %d runes, want %d", tok, tc.rules, runes, want)
		}
	}
}

func TestScanString(t *testing.T) {
	for _, tok := range strictStrings {
		checkScanString(t, tok)
	}
}

func FuzzScanString(f *testing.F) {
	for _, tok := range strictStrings {
		f.Add(tok)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkScanString(t, `"`+s+`"`)
		checkScanString(t, `"`+s)
	})
}

func TestScanNumberAndLiteral(t *testing.T) {
	for _, tok := range []string{"0", "-0", "1.5", "-1e10", "2E+3", "3e-2", "0.0", "123456789012345678901234567890",
		"01", "-", "1.", "1e", "1e+", ".5", "+1", "--1", "1.e3", "-a", "0x10"} {
		end, err := ScanNumber([]byte(tok), 0)
		want := stdjson.Valid([]byte(tok))
		if got := err == nil && end == len(tok); got != want {
			t.Errorf("ScanNumber(%q) = %d, %v; want valid %v", tok, end, err, want)
		}
	}
	for _, tc := range []struct {
		in, lit string
		ok      bool
	}{{"true", "true", true}, {"tru", "true", false}, {"nul", "null", false}, {"falsey", "false", true}} {
		if _, err := ScanLiteral([]byte(tc.in), 0, tc.lit); (err == nil) != tc.ok {
			t.Errorf("ScanLiteral(%q, %q) = %v", tc.in, tc.lit, err)
		}
	}
}
