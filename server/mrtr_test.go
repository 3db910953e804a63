package server

import (
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// TestMRTRStateCarriesArgs checks that the requestState sealed on the first
// round of a request is accepted on the retry of the same request (found
// by the go-sdk interop tests: the first round sealed an empty digest, so
// every retry of a call with arguments was refused), and refused for
// other arguments.
func TestMRTRStateCarriesArgs(t *testing.T) {
	s := New(protocol.Implementation{Name: "t"}, nil)
	cases := []struct {
		name          string
		first, retry  string
		wantRejection bool
	}{
		{"same args", `{"a":1,"b":"x"}`, `{ "b" : "x", "a" : 1 }`, false},
		{"empty object then absent", `{}`, ``, false},
		{"absent then empty object", ``, `{}`, false},
		{"null then empty object", `null`, `{}`, false},
		{"other args", `{"a":1}`, `{"a":2}`, true},
		{"args then none", `{"a":1}`, ``, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := s.newMRTR(protocol.MethodToolsCall, "tool", jsontext.Value(c.first), &protocol.MRTRParams{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.answerKey(m.nextKey("elicit"), protocol.MethodElicit, &protocol.ElicitParams{Message: "?"}); !errors.Is(err, ErrInputRequired) {
				t.Fatalf("answer = %v, want ErrInputRequired", err)
			}
			ir, err := m.inputRequired()
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.newMRTR(protocol.MethodToolsCall, "tool", jsontext.Value(c.retry), &protocol.MRTRParams{
				RequestState:   ir.RequestState,
				InputResponses: map[string]jsontext.Value{"elicit-1": jsontext.Value(`{"action":"decline"}`)},
			})
			if (err != nil) != c.wantRejection {
				t.Fatalf("retry: err = %v, want rejection %v", err, c.wantRejection)
			}
		})
	}
}
