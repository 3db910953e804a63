package stdio

import "testing"

func TestLineID(t *testing.T) {
	tests := []struct {
		head, tail string
		id         string
		request    bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"text":"xxx`, `xx"}}`, "7", false},
		{`{"result":{"id":1,"text":"xx`, `xx"},"jsonrpc":"2.0","id":"a\"b"}`, `"a\"b"`, false},
		{`{"result":{"text":"xx`, `xx"}, "id" : 12 }` + "\r", "12", false},
		{`{"jsonrpc":"2.0","method":"sampling/createMessage","id":3,"params":{`, `}}`, "3", true},
		{`{"method":"x","params":{"a":"`, `"},"id":3}`, "", true}, // a request: its id is not an answer's
		{`{"result":{"text":"x`, `x","id":5}}`, "", false},        // an id inside the result
		{`{"result":"x`, `x"}`, "", false},
		{`[{"id":1}`, `]`, "", false},
		{`{"id":{"a":1},"result":`, `}`, "{\"a\":1}", false}, // found; the engine refuses it as an id
	}
	for _, tt := range tests {
		id, request, ok := lineID([]byte(tt.head), []byte(tt.tail))
		if string(id) != tt.id || ok != (tt.id != "") || request != tt.request {
			t.Errorf("lineID(%q, %q) = %q, %v, %v; want %q, %v", tt.head, tt.tail, id, request, ok, tt.id, tt.request)
		}
	}
}
