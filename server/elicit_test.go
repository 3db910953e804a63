package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

var eras = []string{protocol.Version20260728, protocol.Version20251125}

// connectPipe serves s over an in-memory pipe to a client of the given
// options, until the test ends.
func connectPipe(t testing.TB, s *server.Server, opts *client.Options) *client.Client {
	t.Helper()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		conn.Close()
		conn.Wait()
	})
	return c
}

var nameForm = &protocol.ElicitParams{Message: "Name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)}

// TestElicitAnswerChecked: an elicitation answered {"action":"bogus"} is
// refused with invalid params, the same by Elicit and Ask, in both eras
// (on a12c33f Elicit accepted it in both eras, and Ask refused it with a
// protocol error in one era and a tool error in the other).
func TestElicitAnswerChecked(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "elicit"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		res, err := req.Elicit(ctx, nameForm)
		if err != nil {
			return "", err
		}
		return "accepted action " + res.Action, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "ask"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		raw, err := req.Ask(ctx, "name", protocol.MethodElicit, nameForm)
		if err != nil {
			return "", err
		}
		return "accepted " + string(raw), nil
	})
	for _, v := range eras {
		for _, tool := range []string{"elicit", "ask"} {
			t.Run(v+"/"+tool, func(t *testing.T) {
				c := connectPipe(t, s, &client.Options{ProtocolVersion: v,
					Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
						return &protocol.ElicitResult{Action: "bogus"}, nil
					}})
				res, err := c.Call(context.Background(), tool, nil)
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, `unknown elicitation action "bogus"`) {
					t.Fatalf("got %+v, %v; want invalid params naming the action", res, err)
				}
			})
		}
	}
}

// TestMissingCapabilityOneClass: asking a client that did not declare
// elicitation is the protocol error MissingRequiredClientCapability in
// both eras, and matches ErrClientUnsupported in both (on a12c33f: a tool
// error in legacy, and no ErrClientUnsupported in the stateless era).
func TestMissingCapabilityOneClass(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	var unsupported atomic.Int32
	server.AddTool(s, &protocol.Tool{Name: "elicit"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		_, err := req.Elicit(ctx, nameForm)
		if errors.Is(err, server.ErrClientUnsupported) {
			unsupported.Add(1)
		}
		return "", err
	})
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			unsupported.Store(0)
			c := connectPipe(t, s, &client.Options{ProtocolVersion: v})
			res, err := c.Call(context.Background(), "elicit", nil)
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != protocol.CodeMissingRequiredClientCapability ||
				string(je.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
				t.Errorf("got %+v, %v; want MissingRequiredClientCapability naming elicitation", res, err)
			}
			if unsupported.Load() != 1 {
				t.Errorf("the handler's error does not match ErrClientUnsupported")
			}
		})
	}
}

// syncLog collects log output of concurrent writers.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSwallowedQuestionIsSent: a handler that turns the error of an
// unanswered Elicit into an ordinary result still gets its question to
// the client in the stateless era, and the server warns; the answer then
// comes as in a legacy session (on a12c33f the stateless call succeeded
// with "elicit failed: input required from the client").
func TestSwallowedQuestionIsSent(t *testing.T) {
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			var log syncLog
			s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			server.AddTool(s, &protocol.Tool{Name: "swallow"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				res, err := req.Elicit(ctx, nameForm)
				if err != nil {
					return "elicit failed: " + err.Error(), nil // the misuse
				}
				return fmt.Sprintf("answer %s %v", res.Action, res.Content["name"]), nil
			})
			server.AddTool(s, &protocol.Tool{Name: "swallow-error"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				res, err := req.Elicit(ctx, nameForm)
				if err != nil {
					return "", errors.New("could not ask") // the error replaced
				}
				return "answer " + res.Action, nil
			})
			c := connectPipe(t, s, interviewOptions(v))
			for tool, want := range map[string]string{"swallow": "answer accept Ann", "swallow-error": "answer accept"} {
				res, err := c.Call(context.Background(), tool, nil)
				if err != nil || res.IsError || res.Content[0].Text != want {
					t.Errorf("%s: %+v %v, want %q", tool, res, err, want)
				}
			}
			warnings := strings.Count(log.String(), "instead of ErrInputRequired")
			if want := map[bool]int{true: 2, false: 0}[v == protocol.Version20260728]; warnings != want {
				t.Errorf("%d warnings, want %d:\n%s", warnings, want, log.String())
			}
		})
	}
}

// TestOnceCountsSideEffects: a handler asking two questions in sequence
// runs three times in the stateless era (once in a legacy session), and
// so does unguarded code before the first question; through server.Once
// each side effect happens once per call in both eras.
func TestOnceCountsSideEffects(t *testing.T) {
	var runs, guarded, unguarded atomic.Int32
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "two-questions"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		runs.Add(1)
		unguarded.Add(1)
		var names []string
		for i := range 2 {
			n, err := server.Once(ctx, req, fmt.Sprint("effect-", i), func(context.Context) (int32, error) {
				return guarded.Add(1), nil
			})
			if err != nil {
				return "", err
			}
			res, err := req.Elicit(ctx, nameForm)
			if err != nil {
				return "", err
			}
			names = append(names, fmt.Sprint(res.Content["name"], n))
		}
		return strings.Join(names, ","), nil
	})
	for _, tc := range []struct {
		version                  string
		runs, guarded, unguarded int32
	}{
		{protocol.Version20260728, 3, 2, 3},
		{protocol.Version20251125, 1, 2, 1},
	} {
		t.Run(tc.version, func(t *testing.T) {
			runs.Store(0)
			guarded.Store(0)
			unguarded.Store(0)
			c := connectPipe(t, s, interviewOptions(tc.version))
			res, err := c.Call(context.Background(), "two-questions", nil)
			if err != nil || res.IsError || res.Content[0].Text != "Ann1,Ann2" {
				t.Fatalf("%+v %v", res, err)
			}
			if runs.Load() != tc.runs || guarded.Load() != tc.guarded || unguarded.Load() != tc.unguarded {
				t.Errorf("runs %d, side effects through Once %d, without %d; want %d, %d, %d",
					runs.Load(), guarded.Load(), unguarded.Load(), tc.runs, tc.guarded, tc.unguarded)
			}
		})
	}
}
