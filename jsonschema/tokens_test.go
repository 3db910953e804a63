package jsonschema_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/jsonschema"
)

// TestDecoderAndValidatorAgree: a tool call's arguments are read twice,
// by jsonrpc's decoder (the message) and by the validator (the
// arguments), with one tokenizer. A malformed token is the same fault to
// both, named the same way, wherever it is found first. (On a12c33f each
// had a tokenizer of its own, and they had drifted: "invalid escape 'x'"
// against "invalid escape sequence", "invalid number fraction" against
// "invalid number".)
func TestDecoderAndValidatorAgree(t *testing.T) {
	v, err := jsonschema.CompileJSON([]byte(`{"type":"object"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	decoderWhat := regexp.MustCompile(`^invalid JSON at offset \d+: (.*)$`)
	validatorWhat := regexp.MustCompile(`^arguments are not valid JSON: (.*) \(at offset \d+\)$`)
	for _, args := range []string{
		`{"a":"\x"}`,
		`{"a":"\u12g4"}`,
		"{\"a\":\"tab\there\"}",
		"{\"a\":\"\xff\"}",
		"{\"a\":\"\xed\xa0\x80\"}",
		`{"a":"unterminated`,
		`{"a":1.}`,
		`{"a":1e+}`,
		`{"a":-x}`,
		`{"a":tru}`,
		`{"a":nul}`,
		`{"a":[1,+2]}`,
	} {
		_, derr := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":`+args+`}}`), jsonrpc.Limits{})
		verr := v.Validate([]byte(args))
		if derr == nil || verr == nil {
			t.Errorf("%q: decoder %v, validator %v; want both to refuse it", args, derr, verr)
			continue
		}
		var de *jsonrpc.DecodeError
		msg := derr.Error()
		if errors.As(derr, &de) && de.Err != nil {
			msg = de.Err.Message
		}
		d := decoderWhat.FindStringSubmatch(msg)
		w := validatorWhat.FindStringSubmatch(verr.Error())
		if d == nil || w == nil || d[1] != w[1] {
			t.Errorf("%q: decoder says %q, validator %q", args, msg, verr.Error())
		}
	}
}
