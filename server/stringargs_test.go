package server

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// A typed tool whose arguments are an object of strings is validated by
// the pass that decodes it: the outcome must be the validator's, input by
// input.
func TestStringArgsMatchValidator(t *testing.T) {
	type args struct {
		Message string `json:"message"`
		Note    string `json:"note,omitempty"`
	}
	s := New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *Request, in args) (string, error) {
		return in.Message + "|" + in.Note, nil
	})
	e, _ := s.tools.get("echo")
	if e.validator != nil {
		t.Fatal("the tool's arguments are validated apart from decoding")
	}
	_, validator, err := inferSchema(reflect.TypeFor[args]())
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{
		`{"message":"hi"}`,
		`{"message":"hi","note":"n"}`,
		`{"note":"n","message":"hi"}`,
		`{ "message" : "a\"b\u00e9" , "note" : "" }`,
		`{"\u006dessage":"escaped name"}`,
		`{}`,
		`{"note":"no message"}`,
		`{"message":null}`,
		`{"message":1}`,
		`{"message":["a"]}`,
		`{"message":"hi","extra":"x"}`,
		`{"Message":"case"}`,
		`[]`,
		`"message"`,
	}
	for _, in := range inputs {
		out, err := e.handler(context.Background(), &Request{server: s}, jsontext.Value(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		res := asCallToolResult(t, out)
		got := fmt.Sprintf("isError=%v %s", res.IsError, res.Content[0].Text)
		var want string
		if verr := validator.ValidateTrusted([]byte(in)); verr != nil {
			want = fmt.Sprintf("isError=true %s", invalidArguments("echo", verr).Content[0].Text)
		} else {
			var a args
			if err := json.Unmarshal([]byte(in), &a); err != nil {
				t.Fatal(err)
			}
			want = "isError=false " + a.Message + "|" + a.Note
		}
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

// Tools whose schema asserts more than string members keep the validator.
func TestStringArgsOnlyWhenExact(t *testing.T) {
	s := New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	h := func(ctx context.Context, req *Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	}
	AddTool(s, &protocol.Tool{Name: "min", InputSchema: []byte(`{"type":"object","properties":{"message":{"type":"string","minLength":2}},"additionalProperties":false}`)}, h)
	AddTool(s, &protocol.Tool{Name: "open", InputSchema: []byte(`{"type":"object","properties":{"message":{"type":"string"}}}`)}, h)
	AddTool(s, &protocol.Tool{Name: "nullable", InputSchema: []byte(`{"type":"object","properties":{"message":{"type":["string","null"]}},"additionalProperties":false}`)}, h)
	AddTool(s, &protocol.Tool{Name: "exact", InputSchema: []byte(`{"type":"object","properties":{"message":{"type":"string","description":"d"}},"additionalProperties":false,"required":["message"]}`)}, h)
	AddTool(s, &protocol.Tool{Name: "int"}, func(ctx context.Context, req *Request, in struct {
		N int `json:"n"`
	}) (string, error) {
		return "", nil
	})
	for name, wantValidator := range map[string]bool{"min": true, "open": true, "nullable": true, "exact": false, "int": true} {
		e, _ := s.tools.get(name)
		if got := e.validator != nil; got != wantValidator {
			t.Errorf("%s: validator kept = %v, want %v", name, got, wantValidator)
		}
	}
}

// asCallToolResult returns a tool handler's result as the client sees it.
func asCallToolResult(t *testing.T, res any) *protocol.CallToolResult {
	t.Helper()
	if r, ok := res.(*protocol.CallToolResult); ok {
		return r
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var r protocol.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return &r
}
