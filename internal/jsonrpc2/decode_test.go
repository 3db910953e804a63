package jsonrpc2

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
)

// want describes a decoded message; empty fields are not checked unless
// the message kind makes them meaningful.
type want struct {
	kind   string // "request", "notification", "response", "error"
	id     string // ID.String()
	method string
	params string
	result string
	code   int64
	msg    string
	data   string
}

func kindOf(m *Message) string {
	switch {
	case m.IsRequest():
		return "request"
	case m.IsNotification():
		return "notification"
	case m.Error != nil:
		return "error"
	default:
		return "response"
	}
}

func checkMessage(t *testing.T, m *Message, w want) {
	t.Helper()
	if got := kindOf(m); got != w.kind {
		t.Errorf("kind = %s, want %s", got, w.kind)
	}
	wantID := w.id
	if wantID == "" {
		wantID = "null"
	}
	if got := m.ID.String(); got != wantID {
		t.Errorf("id = %s, want %s", got, wantID)
	}
	if m.Method != w.method {
		t.Errorf("method = %q, want %q", m.Method, w.method)
	}
	if string(m.Params) != w.params {
		t.Errorf("params = %s, want %s", m.Params, w.params)
	}
	if string(m.Result) != w.result {
		t.Errorf("result = %s, want %s", m.Result, w.result)
	}
	if w.kind == "error" {
		if m.Error.Code != w.code || m.Error.Message != w.msg || string(m.Error.Data) != w.data {
			t.Errorf("error = {%d %q %s}, want {%d %q %s}", m.Error.Code, m.Error.Message, m.Error.Data, w.code, w.msg, w.data)
		}
	} else if m.Error != nil {
		t.Errorf("unexpected error object %v", m.Error)
	}
}

var acceptTests = []struct {
	name string
	in   string
	want want
}{
	{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		want{kind: "request", id: "1", method: "ping"}},
	{"request string id", `{"jsonrpc":"2.0","id":"7","method":"ping"}`,
		want{kind: "request", id: `"7"`, method: "ping"}},
	{"request empty string id", `{"jsonrpc":"2.0","id":"","method":"ping"}`,
		want{kind: "request", id: `""`, method: "ping"}},
	{"request zero id", `{"jsonrpc":"2.0","id":0,"method":"ping"}`,
		want{kind: "request", id: "0", method: "ping"}},
	{"request negative id", `{"jsonrpc":"2.0","id":-42,"method":"ping"}`,
		want{kind: "request", id: "-42", method: "ping"}},
	{"request minus zero id", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
		want{kind: "request", id: "-0", method: "ping"}},
	{"request max int64 id", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}`,
		want{kind: "request", id: "9223372036854775807", method: "ping"}},
	{"request min int64 id", `{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}`,
		want{kind: "request", id: "-9223372036854775808", method: "ping"}},
	{"request big id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`,
		want{kind: "request", id: "123456789012345678901234567890", method: "ping"}},
	{"request escaped id", `{"jsonrpc":"2.0","id":"a\"b\\c\u00e9\ud83d\ude00","method":"ping"}`,
		want{kind: "request", id: `"a\"b\\c` + "é😀" + `"`, method: "ping"}},
	{"request object params", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
		want{kind: "request", id: "2", method: "tools/call", params: `{"name":"x","arguments":{"a":[1,2,{"b":null}]}}`}},
	{"request array params", `{"jsonrpc":"2.0","id":2,"method":"m","params":[1,"two",true]}`,
		want{kind: "request", id: "2", method: "m", params: `[1,"two",true]`}},
	{"request empty params", `{"jsonrpc":"2.0","id":2,"method":"m","params":{}}`,
		want{kind: "request", id: "2", method: "m", params: `{}`}},
	{"request empty array params", `{"jsonrpc":"2.0","id":2,"method":"m","params":[]}`,
		want{kind: "request", id: "2", method: "m", params: `[]`}},
	{"members in any order", `{"params":{"x":1},"method":"m","id":"q","jsonrpc":"2.0"}`,
		want{kind: "request", id: `"q"`, method: "m", params: `{"x":1}`}},
	{"whitespace everywhere", " \t\r\n{ \"jsonrpc\" : \"2.0\" ,\n\"id\"\t:\r3 , \"method\" : \"m\" , \"params\" : [ ] } \n",
		want{kind: "request", id: "3", method: "m", params: `[ ]`}},
	{"unknown members ignored", `{"jsonrpc":"2.0","id":1,"method":"m","extra":{"deep":[1]},"Method":"x"}`,
		want{kind: "request", id: "1", method: "m"}},
	{"method with escapes", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
		want{kind: "request", id: "1", method: "tools/call"}},
	{"method unknown", `{"jsonrpc":"2.0","id":1,"method":"x/y\u00e9"}`,
		want{kind: "request", id: "1", method: "x/yé"}},
	{"escaped member names", `{"\u006asonrpc":"2.0","i\u0064":5,"\u006dethod":"ping"}`,
		want{kind: "request", id: "5", method: "ping"}},
	{"case-sensitive id", `{"jsonrpc":"2.0","ID":1,"method":"ping"}`,
		want{kind: "notification", method: "ping"}},
	{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		want{kind: "notification", method: "notifications/initialized"}},
	{"notification params", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}`,
		want{kind: "notification", method: "notifications/progress", params: `{"progressToken":"t","progress":0.5}`}},
	{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`,
		want{kind: "response", id: "1", result: `{}`}},
	{"response string id", `{"jsonrpc":"2.0","id":"abc","result":{"tools":[]}}`,
		want{kind: "response", id: `"abc"`, result: `{"tools":[]}`}},
	{"response scalar result", `{"jsonrpc":"2.0","id":1,"result":42}`,
		want{kind: "response", id: "1", result: `42`}},
	{"response null result", `{"jsonrpc":"2.0","id":1,"result":null}`,
		want{kind: "response", id: "1", result: `null`}},
	{"response string result", `{"jsonrpc":"2.0","id":1,"result":"ok"}`,
		want{kind: "response", id: "1", result: `"ok"`}},
	{"response ignores params", `{"jsonrpc":"2.0","id":1,"result":{},"params":{"_meta":{"progressToken":1}}}`,
		want{kind: "response", id: "1", result: `{}`}},
	{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`,
		want{kind: "error", id: "1", code: -32601, msg: "Method not found"}},
	{"error response data", `{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad","data":{"why":[1]}}}`,
		want{kind: "error", id: `"x"`, code: -32602, msg: "bad", data: `{"why":[1]}`}},
	{"error response null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		want{kind: "error", code: -32700, msg: "Parse error"}},
	{"error response no id", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`,
		want{kind: "error", code: -32700, msg: "Parse error"}},
	{"error response escaped message", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a\nb\u00e9"}}`,
		want{kind: "error", id: "1", code: 1, msg: "a\nbé"}},
	{"error response positive code", `{"jsonrpc":"2.0","id":1,"error":{"message":"m","code":5000}}`,
		want{kind: "error", id: "1", code: 5000, msg: "m"}},
	{"error response no message", `{"jsonrpc":"2.0","id":1,"error":{"code":-1}}`,
		want{kind: "error", id: "1", code: -1}},
	{"deep params within limit", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 127) + strings.Repeat("]", 127) + `}`,
		want{kind: "request", id: "1", method: "m", params: strings.Repeat("[", 127) + strings.Repeat("]", 127)}},
	{"unicode strings", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"日本語 😀 \u0000 \/"}}`,
		want{kind: "request", id: "1", method: "m", params: `{"s":"日本語 😀 \u0000 \/"}`}},
	{"lone surrogate escape in params", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"\ud800"}}`,
		want{kind: "request", id: "1", method: "m", params: `{"s":"\ud800"}`}},
	{"numbers", `{"jsonrpc":"2.0","id":1,"method":"m","params":[0,-0,1.5,-1e10,2E+3,3e-2,0.0]}`,
		want{kind: "request", id: "1", method: "m", params: `[0,-0,1.5,-1e10,2E+3,3e-2,0.0]`}},
	{"many members", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14}}`,
		want{kind: "request", id: "1", method: "m", params: `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14}`}},
}

func TestDecodeAccept(t *testing.T) {
	for _, tc := range acceptTests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), Limits{})
			if err != nil {
				t.Fatalf("Decode(%s): %v", tc.in, err)
			}
			checkMessage(t, m, tc.want)
			if m.Size != len(tc.in) {
				t.Errorf("Size = %d, want %d", m.Size, len(tc.in))
			}
			if !json.Valid([]byte(tc.in)) {
				t.Errorf("encoding/json rejects an accepted message")
			}
		})
	}
}

var rejectTests = []struct {
	name string
	in   string
	code int64
	msg  string // substring of the error message
	id   string // ID carried by the DecodeError; "" for none
	req  bool   // whether the error says the message was a request
}{
	// Not JSON at all.
	{"empty", ``, CodeParseError, "unexpected end of input", "", false},
	{"spaces", " \n\t", CodeParseError, "unexpected end of input", "", false},
	{"garbage", `hello`, CodeParseError, "unexpected character 'h'", "", false},
	{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, CodeParseError, "unterminated object", "1", true},
	{"truncated in name", `{"jsonrpc":"2.0","id":1,"meth`, CodeParseError, "unterminated string", "1", false},
	{"missing colon", `{"jsonrpc" "2.0"}`, CodeParseError, "expected ':'", "", false},
	{"missing comma", `{"jsonrpc":"2.0" "id":1}`, CodeParseError, "expected ',' or '}'", "", false},
	{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"m",}`, CodeParseError, "expected a member name", "1", true},
	{"unquoted name", `{jsonrpc:"2.0"}`, CodeParseError, "expected a member name", "", false},
	{"single quotes", `{'jsonrpc':'2.0'}`, CodeParseError, "expected a member name", "", false},
	{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"m"}x`, CodeParseError, "data after the message", "1", true},
	{"trailing data after response", `{"jsonrpc":"2.0","id":1,"result":{}} {}`, CodeParseError, "data after the message", "1", false},
	{"two messages", `{"jsonrpc":"2.0","method":"m"}{"jsonrpc":"2.0","method":"m"}`, CodeParseError, "data after the message", "", true},
	{"bad literal", `{"jsonrpc":"2.0","id":1,"method":"m","params":[tru]}`, CodeParseError, "invalid literal", "1", true},
	{"bad number", `{"jsonrpc":"2.0","id":1,"method":"m","params":[01]}`, CodeParseError, "expected ',' or ']'", "1", true},
	{"bad fraction", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1.]}`, CodeParseError, "invalid number fraction", "1", true},
	{"bad exponent", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1e]}`, CodeParseError, "invalid number exponent", "1", true},
	{"plus number", `{"jsonrpc":"2.0","id":1,"method":"m","params":[+1]}`, CodeParseError, "unexpected character '+'", "1", true},
	{"NaN", `{"jsonrpc":"2.0","id":1,"method":"m","params":[NaN]}`, CodeParseError, "unexpected character 'N'", "1", true},
	{"unterminated array", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2`, CodeParseError, "unterminated array", "1", true},
	{"invalid UTF-8 in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"s\":\"\xff\"}}", CodeParseError, "invalid UTF-8", "1", true},
	{"invalid UTF-8 in name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"\xc3\x28\":1}", CodeParseError, "invalid UTF-8", "1", false},
	{"surrogate encoded in UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"\xed\xa0\x80\"}", CodeParseError, "invalid UTF-8", "", false},
	{"overlong UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\xaf\"}", CodeParseError, "invalid UTF-8", "", false},
	{"invalid UTF-8 outside strings", "{\"jsonrpc\":\"2.0\",\xff}", CodeParseError, "expected a member name", "", false},
	{"control character", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\nb\"}", CodeParseError, "control character", "1", false},
	{"tab in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}", CodeParseError, "control character", "1", false},
	{"NUL in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\x00b\"}", CodeParseError, "control character", "1", false},
	{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"\x41"}`, CodeParseError, "invalid escape 'x'", "1", false},
	{"short unicode escape", `{"jsonrpc":"2.0","id":1,"method":"\u12"}`, CodeParseError, `invalid \u escape`, "1", false},
	{"non-hex unicode escape", `{"jsonrpc":"2.0","id":1,"method":"\u12g4"}`, CodeParseError, `invalid \u escape`, "1", false},
	{"escape at end", `{"jsonrpc":"2.0","id":1,"method":"\`, CodeParseError, "unterminated string", "1", false},

	// Duplicates, at every level.
	{"duplicate jsonrpc", `{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"m"}`, CodeParseError, `duplicate member name "jsonrpc"`, "", false},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, CodeParseError, `duplicate member name "id"`, "1", false},
	{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, CodeParseError, `duplicate member name "method"`, "1", true},
	{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":{}}`, CodeParseError, `duplicate member name "params"`, "1", true},
	{"duplicate unknown member", `{"jsonrpc":"2.0","x":1,"x":2,"method":"a"}`, CodeParseError, `duplicate member name "x"`, "", false},
	{"duplicate escaped", `{"jsonrpc":"2.0","method":"a","\u006dethod":"b"}`, CodeParseError, `duplicate member name "\u006dethod"`, "", true},
	{"duplicate in params", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}`, CodeParseError, `duplicate member name "a"`, "1", true},
	{"duplicate in _meta", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1,"progressToken":2}}}`, CodeParseError, `duplicate member name "progressToken"`, "1", true},
	{"duplicate _meta", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{},"_meta":{}}}`, CodeParseError, `duplicate member name "_meta"`, "1", true},
	{"duplicate deep", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"b":{"c":[[{"d":1,"e":2,"d":3}]]}}]}}`, CodeParseError, `duplicate member name "d"`, "1", true},
	{"duplicate in result", `{"jsonrpc":"2.0","id":1,"result":{"x":1,"x":1}}`, CodeParseError, `duplicate member name "x"`, "1", false},
	{"duplicate in error", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":""}}`, CodeParseError, `duplicate member name "code"`, "1", false},
	{"duplicate after many members", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"a":14}}`, CodeParseError, `duplicate member name "a"`, "1", true},
	{"duplicate after an inner object with the same names", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"a":1,"b":{"a":2}},"b":2,"a":3}}`, CodeParseError, `duplicate member name "a" at offset 77`, "1", true},
	{"duplicate after a deep spill", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"x":{"a":1,"b":2,"c":3,"d":4,"e":5},"m":13,"c":14}}`, CodeParseError, `duplicate member name "c"`, "1", true},
	{"duplicate escaped after plain", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"ab":1,"x":2,"\u0061b":3}}`, CodeParseError, `duplicate member name "\u0061b"`, "1", true},
	{"duplicate plain after escaped", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u0061b":1,"x":{"ab":1},"ab":3}}`, CodeParseError, `duplicate member name "ab"`, "1", true},
	{"duplicate in big object", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"n":15}}`, CodeParseError, `duplicate member name "n"`, "1", true},

	// Well-formed JSON that is not a JSON-RPC message.
	{"case-sensitive method", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, CodeInvalidRequest, "neither method nor result nor error", "1", false},
	{"case-sensitive jsonrpc", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "1", true},
	{"missing jsonrpc", `{"id":1,"method":"ping"}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "1", true},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "1", true},
	{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "1", true},
	{"jsonrpc in response", `{"jsonrpc":"3.0","id":1,"result":{}}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "1", false},
	{"null id on request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "must not be null", "", true},
	{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, "not an integer", "", true},
	{"integral float id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, CodeInvalidRequest, "not an integer", "", true},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, "not an integer", "", true},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest, "an object", "", true},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "an array", "", true},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "a boolean", "", true},
	{"lone surrogate id", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, CodeInvalidRequest, "invalid id", "", true},
	{"method not string", `{"jsonrpc":"2.0","id":1,"method":5}`, CodeInvalidRequest, `"method" must be a string`, "1", true},
	{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, CodeInvalidRequest, `"method" must be a string`, "1", true},
	{"method empty", `{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest, "non-empty", "1", true},
	{"params string", `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, CodeInvalidRequest, `"params" must be an object or an array`, "1", true},
	{"params number", `{"jsonrpc":"2.0","id":1,"method":"m","params":1}`, CodeInvalidRequest, `"params" must be an object or an array`, "1", true},
	{"params null", `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, CodeInvalidRequest, `"params" must be an object or an array`, "1", true},
	{"notification params bool", `{"jsonrpc":"2.0","method":"m","params":true}`, CodeInvalidRequest, `"params" must be an object or an array`, "", true},
	{"request with result", `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, CodeInvalidRequest, "must not carry a result", "1", true},
	{"request with error", `{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":""}}`, CodeInvalidRequest, "must not carry a result", "1", true},
	{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, CodeInvalidRequest, "both result and error", "1", false},
	{"result without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, "needs an id", "", false},
	{"result null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, CodeInvalidRequest, "needs an id", "", false},
	{"nothing", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "neither method nor result nor error", "1", false},
	{"empty object", `{}`, CodeInvalidRequest, `"jsonrpc" must be "2.0"`, "", false},
	{"error not object", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, CodeInvalidRequest, `"error" must be an object`, "1", false},
	{"error without code", `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, CodeInvalidRequest, "without a code", "1", false},
	{"error float code", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, CodeInvalidRequest, "code must be an integer", "1", false},
	{"error string code", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}}`, CodeInvalidRequest, "code must be an integer", "1", false},
	{"error huge code", `{"jsonrpc":"2.0","id":1,"error":{"code":99999999999999999999,"message":"x"}}`, CodeInvalidRequest, "code must be an integer", "1", false},
	{"array", `[]`, CodeInvalidRequest, "batches are not supported", "", false},
	{"lone bracket", `[`, CodeInvalidRequest, "batches are not supported", "", false},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, "batches are not supported", "", false},
	{"string", `"ping"`, CodeInvalidRequest, "must be an object", "", false},
	{"number", `1`, CodeInvalidRequest, "must be an object", "", false},
	{"null", `null`, CodeInvalidRequest, "must be an object", "", false},

	// Limits.
	{"too deep params", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 128) + strings.Repeat("]", 128) + `}`, CodeParseError, "nested deeper than 128 levels", "1", true},
	{"too deep objects", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200) + `}`, CodeParseError, "nested deeper than 128 levels", "1", true},
	{"too deep result", `{"jsonrpc":"2.0","id":9,"result":` + strings.Repeat("[", 1000) + `}`, CodeParseError, "nested deeper than 128 levels", "9", false},
	{"too deep top level", strings.Repeat("[", 100000), CodeInvalidRequest, "batches are not supported", "", false},
	{"too deep scalar context", ` ` + strings.Repeat("[", 100000), CodeInvalidRequest, "batches are not supported", "", false},
	{"too large", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"` + strings.Repeat("x", DefaultMaxSize) + `"}}`, CodeInvalidRequest, "exceeds the limit of 16777216 bytes", "1", true},
	{"too large response", `{"jsonrpc":"2.0","id":"r","result":"` + strings.Repeat("x", DefaultMaxSize) + `"}`, CodeInvalidRequest, "exceeds the limit", `"r"`, false},
	{"too large garbage", strings.Repeat("x", DefaultMaxSize+1), CodeInvalidRequest, "exceeds the limit", "", false},
}

func TestDecodeReject(t *testing.T) {
	for _, tc := range rejectTests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), Limits{})
			if err == nil {
				t.Fatalf("Decode accepted %.200s as %+v", tc.in, m)
			}
			if m != nil {
				t.Errorf("Decode returned a message with its error")
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v is not a *DecodeError", err, err)
			}
			if de.Err.Code != tc.code {
				t.Errorf("code = %d, want %d (%s)", de.Err.Code, tc.code, de.Err.Message)
			}
			if !strings.Contains(de.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", de.Error(), tc.msg)
			}
			if len(de.Error()) > 300 {
				t.Errorf("error message of %d bytes is too long: %.300s", len(de.Error()), de.Error())
			}
			wantID := tc.id
			if wantID == "" {
				wantID = "null"
			}
			if got := de.ID.String(); got != wantID {
				t.Errorf("error id = %s, want %s", got, wantID)
			}
			if de.request != tc.req {
				t.Errorf("request = %v, want %v", de.request, tc.req)
			}
			var e *Error
			if !errors.As(err, &e) || e != de.Err {
				t.Errorf("DecodeError does not unwrap to its *Error")
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[[[1]]]}}`)
	for _, tc := range []struct {
		lim Limits
		ok  bool
		msg string
	}{
		{Limits{}, true, ""},
		{Limits{MaxSize: len(msg)}, true, ""},
		{Limits{MaxSize: len(msg) - 1}, false, "message of 60 bytes exceeds the limit of 59 bytes"},
		{Limits{MaxDepth: 5}, true, ""},
		{Limits{MaxDepth: 4}, false, "JSON nested deeper than 4 levels"},
		{Limits{MaxDepth: 1}, false, "JSON nested deeper than 1 levels"},
		{Limits{MaxSize: -1, MaxDepth: -1}, true, ""},
	} {
		_, err := Decode(msg, tc.lim)
		if (err == nil) != tc.ok || err != nil && err.Error() != tc.msg {
			t.Errorf("Decode with %+v: error %v, want ok=%v %q", tc.lim, err, tc.ok, tc.msg)
		}
	}
	if got := MaxSize(0); got != DefaultMaxSize {
		t.Errorf("MaxSize(0) = %d", got)
	}
	if got := MaxSize(10); got != 10 {
		t.Errorf("MaxSize(10) = %d", got)
	}
	var de *DecodeError
	if err := TooLarge(11, 10); !errors.As(err, &de) || de.Err.Code != CodeInvalidRequest || de.Error() != "message of 11 bytes exceeds the limit of 10 bytes" || de.ID.IsValid() {
		t.Errorf("TooLarge = %+v", err)
	}
}

func TestDecodeAliasesInput(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1}}`)
	m, err := Decode(in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if &m.Params[0] != &in[bytes.Index(in, []byte(`{"x"`))] {
		t.Errorf("Params does not alias the input")
	}
}

func TestIDRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		wire     string
		isString bool
		n        int64
		isInt    bool
	}{
		{`0`, false, 0, true},
		{`7`, false, 7, true},
		{`-1`, false, -1, true},
		{`9223372036854775807`, false, 9223372036854775807, true},
		{`-9223372036854775808`, false, -9223372036854775808, true},
		{`9223372036854775808`, false, 0, false},
		{`-9223372036854775809`, false, 0, false},
		{`100000000000000000000000000000000000000000`, false, 0, false},
		{`-0`, false, 0, false},
		{`"7"`, true, 0, false},
		{`""`, true, 0, false},
		{`"a\"b"`, true, 0, false},
		{`"\\\/\b\f\n\r\t"`, true, 0, false},
		{`"\u00e9\ud83d\ude00"`, true, 0, false},
		{`"é😀"`, true, 0, false},
		{`"<&>"`, true, 0, false},
		{`"\u0000"`, true, 0, false},
	} {
		t.Run(tc.wire, func(t *testing.T) {
			req := `{"jsonrpc":"2.0","id":` + tc.wire + `,"method":"m"}`
			m, err := Decode([]byte(req), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if m.ID.IsString() != tc.isString {
				t.Errorf("IsString = %v", m.ID.IsString())
			}
			if n, ok := m.ID.Int64(); ok != tc.isInt || n != tc.n {
				t.Errorf("Int64 = %d, %v; want %d, %v", n, ok, tc.n, tc.isInt)
			}
			// The response carries the same id, which reads back equal.
			b, err := AppendMessage(nil, &Message{ID: m.ID, Result: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Decode(b, Limits{})
			if err != nil {
				t.Fatalf("Decode(%s): %v", b, err)
			}
			if r.ID != m.ID {
				t.Errorf("id %s came back as %s", m.ID, r.ID)
			}
			if !tc.isString && !strings.Contains(string(b), `"id":`+tc.wire+`,`) {
				t.Errorf("numeric id %s not sent back as is: %s", tc.wire, b)
			}
			// Same through the json interfaces.
			j, err := json.Marshal(m.ID)
			if err != nil {
				t.Fatal(err)
			}
			var back ID
			if err := json.Unmarshal(j, &back); err != nil || back != m.ID {
				t.Errorf("json round trip of %s: %s -> %v, %v", m.ID, j, back, err)
			}
		})
	}
	// String and integer ids with the same digits are different ids.
	if StringID("7") == Int64ID(7) {
		t.Error(`"7" == 7`)
	}
	if StringID("7").String() != `"7"` || Int64ID(7).String() != "7" || (ID{}).String() != "null" {
		t.Error("String")
	}
	if (ID{}).IsValid() || !StringID("").IsValid() || !Int64ID(0).IsValid() {
		t.Error("IsValid")
	}
	var id ID
	for _, bad := range []string{`1.5`, `{}`, `[]`, `true`, ``, `"\ud800"`} {
		if err := id.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("UnmarshalJSON(%s) accepted", bad)
		}
	}
	if err := id.UnmarshalJSON([]byte(`null`)); err != nil || id.IsValid() {
		t.Errorf("UnmarshalJSON(null) = %v, %v", id, err)
	}
}

// TestDecoderKnowsMCPNames: the decoder picks MCP's members out of a
// request's params by itself, with nothing told to it at start-up (this
// package's tests import no MCP layer), and not what only resembles them.
func TestDecoderKnowsMCPNames(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		want         jsonrpcapi.Meta
	}{
		{"tool call", `{"name":"t","arguments":{},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
			jsonrpcapi.Meta{Raw: []byte(`{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`),
				ProgressToken: []byte("7"), ProtocolVersion: "2026-07-28", Name: []byte(`"t"`), Arguments: []byte(`{}`)}},
		{"other members", `{"n":"t","a":{},"m":{"p":7}}`, jsonrpcapi.Meta{Extra: true}},
		{"meta not an object", `{"_meta":7}`, jsonrpcapi.Meta{}},
	} {
		m, err := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+tc.params+`}`), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		got, want := m.meta, tc.want
		if string(got.Raw) != string(want.Raw) || string(got.ProgressToken) != string(want.ProgressToken) ||
			got.ProtocolVersion != want.ProtocolVersion || string(got.Name) != string(want.Name) ||
			string(got.Arguments) != string(want.Arguments) || got.Extra != want.Extra {
			t.Errorf("%s: picked %+v, want %+v", tc.name, got, want)
		}
	}
}

// TestResultTypeSniffing: the decoder picks a response's resultType out
// of its result while it validates it, and says whether it walked the
// result's members (an object) at all.
func TestResultTypeSniffing(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		resultType string // raw, "" for none
		seen       bool
	}{
		{"complete", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}`, `"complete"`, true},
		{"first", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}`, `"input_required"`, true},
		{"none", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"resultType"}]}}`, "", true},
		{"nested only", `{"jsonrpc":"2.0","id":1,"result":{"a":{"resultType":"task"}}}`, "", true},
		{"escaped name", `{"jsonrpc":"2.0","id":1,"result":{"result\u0054ype":"task"}}`, `"task"`, true},
		{"null", `{"jsonrpc":"2.0","id":1,"result":{"resultType":null}}`, `null`, true},
		{"empty result", `{"jsonrpc":"2.0","id":1,"result":{}}`, "", true},
		{"result first", `{"result":{"resultType":"complete"},"id":1,"jsonrpc":"2.0"}`, `"complete"`, true},
		{"escaped result", `{"jsonrpc":"2.0","id":1,"r\u0065sult":{"resultType":"complete"}}`, `"complete"`, true},
		{"array result", `{"jsonrpc":"2.0","id":1,"result":[{"resultType":"complete"}]}`, "", false},
		{"string result", `{"jsonrpc":"2.0","id":1,"result":"resultType"}`, "", false},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"resultType":"x"}}}`, "", false},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"resultType":"complete"}}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if string(m.meta.ResultType) != tc.resultType || m.meta.ResultSeen != tc.seen {
				t.Errorf("resultType %q (seen %v), want %q (%v)", m.meta.ResultType, m.meta.ResultSeen, tc.resultType, tc.seen)
			}
		})
	}
}

// TestIsErrorSniffing: the decoder picks a result's isError out in the
// walk that finds its resultType, at the top level only.
func TestIsErrorSniffing(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		isError  string // raw, "" for none
	}{
		{"true", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`, "true"},
		{"false first", `{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[]}}`, "false"},
		{"none", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"isError"}]}}`, ""},
		{"nested only", `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"isError":true}}}`, ""},
		{"escaped name", `{"jsonrpc":"2.0","id":1,"result":{"is\u0045rror":true}}`, "true"},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"isError":true}}}`, ""},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"isError":true}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if string(m.meta.IsError) != tc.isError {
				t.Errorf("isError %q, want %q", m.meta.IsError, tc.isError)
			}
		})
	}
}

func TestMetaSniffing(t *testing.T) {
	const pv = "io.modelcontextprotocol/protocolVersion"
	for _, tc := range []struct {
		name, in   string
		raw, token string
		version    string
	}{
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"m"}`, "", "", ""},
		{"no meta", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"_meta":{"progressToken":1}}}}`, "", "", ""},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"m","params":[{"_meta":{"progressToken":1}}]}`, "", "", ""},
		{"string token", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"abc"}}}`, `{"progressToken":"abc"}`, `"abc"`, ""},
		{"int token", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":[1,{"y":2}],"_meta":{"progressToken":42},"z":3}}`, `{"progressToken":42}`, `42`, ""},
		{"big token", `{"jsonrpc":"2.0","method":"n","params":{"_meta":{"progressToken":123456789012345678901234567890}}}`, `{"progressToken":123456789012345678901234567890}`, `123456789012345678901234567890`, ""},
		{"protocol version", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"` + pv + `":"2026-07-28","progressToken":"t"}}}`, `{"` + pv + `":"2026-07-28","progressToken":"t"}`, `"t"`, "2026-07-28"},
		{"escaped protocol version", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"` + pv + `":"2026\u002d07-28"}}}`, `{"` + pv + `":"2026\u002d07-28"}`, "", "2026-07-28"},
		{"protocol version not a string", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"` + pv + `":20260728}}}`, `{"` + pv + `":20260728}`, "", ""},
		{"escaped names", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u005fmeta":{"progress\u0054oken":7}}}`, `{"progress\u0054oken":7}`, "7", ""},
		{"meta not object", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"x"}}`, "", "", ""},
		{"empty meta", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{}}}`, `{}`, "", ""},
		{"meta with spaces", `{"jsonrpc":"2.0","id":1,"method":"m","params":{ "_meta" : { "progressToken" : 1 } }}`, `{ "progressToken" : 1 }`, "1", ""},
		{"case-sensitive", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_Meta":{"progressToken":1},"_meta":{"ProgressToken":2}}}`, `{"ProgressToken":2}`, "", ""},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"progressToken":1}}}`, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if string(m.meta.Raw) != tc.raw || string(m.meta.ProgressToken) != tc.token || m.meta.ProtocolVersion != tc.version {
				t.Errorf("Meta = {%s %s %q}, want {%s %s %q}", m.meta.Raw, m.meta.ProgressToken, m.meta.ProtocolVersion, tc.raw, tc.token, tc.version)
			}
		})
	}
	// A lone surrogate in the protocol version is an error, not a silent drop.
	_, err := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"`+pv+`":"\ud800"}}}`), Limits{})
	var de *DecodeError
	if !errors.As(err, &de) || de.ID != Int64ID(1) || de.Err.Code != CodeInvalidParams {
		t.Errorf("bad protocol version: %v", err)
	}
}

func TestAppendMessageGolden(t *testing.T) {
	type body struct {
		Name string `json:"name"`
		N    int    `json:"n,omitzero"`
	}
	for _, tc := range []struct {
		name string
		m    Message
		want string
	}{
		{"request", Message{ID: Int64ID(1), Method: "ping"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"request string id", Message{ID: StringID("a\"b"), Method: "ping"}, `{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`},
		{"request raw params", Message{ID: Int64ID(-3), Method: "tools/call", Params: []byte(`{"name":"x"}`)}, `{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"x"}}`},
		{"request body", Message{ID: Int64ID(2), Method: "tools/call", Body: body{Name: "x"}}, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`},
		{"request body wins", Message{ID: Int64ID(2), Method: "m", Params: []byte(`[1]`), Body: map[string]int{"a": 1}}, `{"jsonrpc":"2.0","id":2,"method":"m","params":{"a":1}}`},
		{"request raw body", Message{ID: Int64ID(2), Method: "m", Body: []byte(`[true]`)}, `{"jsonrpc":"2.0","id":2,"method":"m","params":[true]}`},
		{"notification", Message{Method: "notifications/initialized"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"notification params", Message{Method: "notifications/cancelled", Body: &cancelledParams{RequestID: StringID("7"), Reason: "timeout"}}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7","reason":"timeout"}}`},
		{"method escaped", Message{Method: "a\"b\n<é>"}, `{"jsonrpc":"2.0","method":"a\"b\n<é>"}`},
		{"response raw", Message{ID: Int64ID(1), Result: []byte(`{"tools":[]}`)}, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		{"response body", Message{ID: StringID("x"), Body: body{Name: "n", N: 3}}, `{"jsonrpc":"2.0","id":"x","result":{"name":"n","n":3}}`},
		{"response empty", Message{ID: Int64ID(1)}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"response big id", Message{ID: mustID(t, `123456789012345678901234567890`)}, `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}`},
		{"error", Message{ID: Int64ID(1), Error: &Error{Code: CodeMethodNotFound, Message: "method not found: x"}}, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: x"}}`},
		{"error data", Message{ID: StringID("1"), Error: &Error{Code: 42, Message: "", Data: []byte(`{"a":[1]}`)}}, `{"jsonrpc":"2.0","id":"1","error":{"code":42,"message":"","data":{"a":[1]}}}`},
		{"error null id", Message{Error: &Error{Code: CodeParseError, Message: "bad"}}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`},
		// Invalid UTF-8 (say, a file name in an error's text) is replaced,
		// never sent as is.
		{"error invalid UTF-8", Message{ID: Int64ID(1), Error: &Error{Code: 1, Message: "file \xff"}}, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"file ` + "\ufffd" + `"}}`},
		{"method invalid UTF-8", Message{ID: StringID("\xfe"), Method: "a\xffb"}, `{"jsonrpc":"2.0","id":"` + "\ufffd" + `","method":"a` + "\ufffd" + `b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendMessage([]byte("prefix"), &tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prefix"+tc.want {
				t.Errorf("got  %s\nwant prefix%s", got, tc.want)
			}
			if m, err := Marshal(&tc.m); err != nil || string(m) != tc.want {
				t.Errorf("Marshal = %s, %v", m, err)
			}
			if _, err := Decode([]byte(tc.want), Limits{}); err != nil {
				t.Errorf("the golden message does not decode: %v", err)
			}
		})
	}
	// A body that cannot be encoded is an internal error.
	_, err := AppendMessage(nil, &Message{ID: Int64ID(1), Body: make(chan int)})
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInternalError {
		t.Errorf("unencodable body: %v", err)
	}
	_, err = AppendMessage(nil, &Message{ID: Int64ID(1), Method: "m", Body: func() {}})
	if !errors.As(err, &e) || e.Code != CodeInternalError {
		t.Errorf("unencodable params: %v", err)
	}
}

func mustID(t *testing.T, raw string) ID {
	t.Helper()
	id, err := parseID([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestErrors(t *testing.T) {
	e := NewError(CodeInvalidParams, "bad %s", "x")
	if e.Error() != "jsonrpc error -32602: bad x" {
		t.Errorf("Error() = %q", e.Error())
	}
	e.Data = []byte(`{"a":1}`)
	if e.Error() != `jsonrpc error -32602: bad x (data: {"a":1})` {
		t.Errorf("Error() = %q", e.Error())
	}
	if !errors.Is(e, &Error{Code: CodeInvalidParams}) || errors.Is(e, &Error{Code: CodeInternalError}) {
		t.Error("Is")
	}
	if got := AsError(errors.New("boom")); got.Code != CodeInternalError || got.Message != "boom" {
		t.Errorf("AsError = %+v", got)
	}
	wrapped := errors.Join(errors.New("x"), e)
	if AsError(wrapped) != e {
		t.Error("AsError does not find a wrapped *Error")
	}
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		in     string
		ok     bool
		strict bool // a documented difference with encoding/json
	}{
		{`1`, true, false}, {` -0.5e+7 `, true, false}, {`"x"`, true, false}, {`[]`, true, false},
		{`{}`, true, false}, {`null`, true, false}, {`[1,[2,{"a":1}]]`, true, false},
		{`"\ud800"`, true, false}, {"\"\x7f\"", true, false}, {`[[[]]]`, true, false},
		{``, false, false}, {`[`, false, false}, {`]`, false, false}, {`1 2`, false, false},
		{`[1,]`, false, false}, {`{"a"}`, false, false}, {`nul`, false, false}, {`-`, false, false},
		{`.5`, false, false}, {"\xef\xbb\xbf{}", false, false},
		// Deeper than the limit of 3 used here.
		{`[1,[2,{"a":[]}]]`, false, true},
		// Duplicate names, compared by value.
		{`{"a":1,"a":1}`, false, true}, {`{"a":1,"\u0061":2}`, false, true},
		{`{"\u00e9":1,"é":2}`, false, true}, {`{"\ud800":1,"\ud800":2}`, false, true},
		{`{"\ud800":1,"\\ud800":2}`, true, false},
		{`[{"a":1},{"a":1}]`, true, false}, {`{"a":{"a":1}}`, true, false},
		// Invalid UTF-8 in strings.
		{"\"\xff\"", false, true}, {"{\"\xc3\":1}", false, true},
	} {
		err := valid([]byte(tc.in), 3)
		if (err == nil) != tc.ok {
			t.Errorf("Valid(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if std := json.Valid([]byte(tc.in)); (std != tc.ok) != tc.strict {
			t.Errorf("Valid(%q): encoding/json says %v, marked strict=%v", tc.in, std, tc.strict)
		}
	}
	if err := valid([]byte(`[[[[]]]]`), 3); err == nil {
		t.Error("depth 4 accepted with limit 3")
	}
}

// Decode returns an interned method name as the very string registered
// (no allocation), and any other as a string of its own.
func TestInternMethod(t *testing.T) {
	name := internMethod([]byte("tasks/get"))
	for range 2 {
		m, err := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`), Limits{})
		if err != nil || m.Method != "tasks/get" || unsafe.StringData(m.Method) != unsafe.StringData(name) {
			t.Errorf("Decode: method %q (%v), not the interned string", m.Method, err)
		}
	}
	if got := internMethod([]byte("tasks/gex")); got != "" {
		t.Errorf("internMethod(tasks/gex) = %q", got)
	}
	if got := internMethod([]byte(strings.Repeat("x", 200))); got != "" {
		t.Errorf("internMethod(long) = %q", got)
	}
	allocs := testing.AllocsPerRun(100, func() { internMethod([]byte("tasks/get")) })
	if allocs != 0 {
		t.Errorf("internMethod allocates %v", allocs)
	}
}
