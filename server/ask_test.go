package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// askServer has a tool asking three questions at once under chosen keys,
// and one asking in two rounds.
func askServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "ask", Version: "1"}, &server.Options{RequestStateKey: []byte("k")})
	s.AddTool(&protocol.Tool{Name: "three", Description: "Asks three things at once"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			answers, err := req.AskAll(ctx,
				server.Question{Key: "user_name", Method: protocol.MethodElicit, Params: &protocol.ElicitParams{
					Message: "Name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)}},
				server.Question{Key: "greeting", Method: protocol.MethodCreateMessage, Params: &protocol.CreateMessageParams{
					Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent("Greet")}}},
					MaxTokens: 50}},
				server.Question{Key: "client_roots", Method: protocol.MethodListRoots},
			)
			if err != nil {
				return nil, err
			}
			var e protocol.ElicitResult
			var m protocol.CreateMessageResult
			var r protocol.ListRootsResult
			json.Unmarshal(answers["user_name"], &e)
			json.Unmarshal(answers["greeting"], &m)
			json.Unmarshal(answers["client_roots"], &r)
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(
				fmt.Sprintf("%v %s %d", e.Content["name"], m.Content[0].Text, len(r.Roots)))}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "two_rounds", Description: "Asks in two rounds"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			var out []string
			for _, key := range []string{"step1", "step2"} {
				raw, err := req.Ask(ctx, key, protocol.MethodElicit, &protocol.ElicitParams{
					Message: key, RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
				if err != nil {
					return nil, err
				}
				var e protocol.ElicitResult
				json.Unmarshal(raw, &e)
				out = append(out, fmt.Sprint(e.Content["name"]))
			}
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(strings.Join(out, ","))}}, nil
		})
	return s
}

func TestAskBothEras(t *testing.T) {
	for _, v := range []string{protocol.Version20260728, protocol.Version20251125} {
		t.Run(v, func(t *testing.T) {
			a, b := memory.NewPipe(jsonrpc.Limits{})
			conn := askServer().Connect(context.Background(), a)
			defer func() { conn.Close(); conn.Wait() }()
			c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, interviewOptions(v))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for tool, want := range map[string]string{"three": "Ann sampled 2", "two_rounds": "Ann,Ann"} {
				res, err := c.Call(context.Background(), tool, nil)
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if res.IsError || len(res.Content) != 1 || res.Content[0].Text != want {
					t.Fatalf("%s: got %+v, want %q", tool, res, want)
				}
			}
		})
	}
}

// statelessCall serves one stateless tools/call with the given extra params
// and capabilities, and returns the result or error as JSON.
func statelessCall(t *testing.T, s *server.Server, tool, caps, extra string) (map[string]any, *jsonrpc.Error) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}%s}}`,
		tool, caps, extra)
	m, err := jsonrpc.Decode([]byte(body), jsonrpc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := handle(s, context.Background(), m, nil, nopPeer{})
	if err != nil {
		je := jsonrpc.AsError(err)
		return nil, je
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	json.Unmarshal(raw, &out)
	return out, nil
}

func interviewOptions(version string) *client.Options {
	return &client.Options{
		ProtocolVersion: version,
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
		},
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "m", Content: protocol.SamplingContent{protocol.TextContent("sampled")}}, nil
		},
		Roots: func(ctx context.Context) ([]protocol.Root, error) {
			return []protocol.Root{{URI: "file:///a"}, {URI: "file:///b"}}, nil
		},
	}
}

// handle serves m as ferry's transports have s serve it.
func handle(s *server.Server, ctx context.Context, m *jsonrpc.Message, sess *server.Session, peer serverapi.Peer) (any, error) {
	return serverapi.OpsOf[*server.Session](s).HandleMessage(ctx, m, sess, peer)
}

type nopPeer struct{}

func (nopPeer) Notify(context.Context, string, any) error { return nil }
func (nopPeer) Call(context.Context, string, any) (*jsonrpc.Message, error) {
	return nil, fmt.Errorf("no calls")
}

const allCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

func TestAskStatelessWire(t *testing.T) {
	s := askServer()
	res, je := statelessCall(t, s, "three", allCaps, "")
	if je != nil {
		t.Fatal(je)
	}
	if res["resultType"] != "input_required" {
		t.Fatalf("round 1: %v", res)
	}
	reqs := res["inputRequests"].(map[string]any)
	for key, method := range map[string]string{"user_name": "elicitation/create", "greeting": "sampling/createMessage", "client_roots": "roots/list"} {
		r, ok := reqs[key].(map[string]any)
		if !ok || r["method"] != method {
			t.Errorf("inputRequests[%q] = %v, want method %s", key, reqs[key], method)
		}
	}
	state := res["requestState"].(string)

	// Partial answers re-ask only what is missing.
	res, je = statelessCall(t, s, "three", allCaps, fmt.Sprintf(`,"requestState":%q,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Bo"}},"extra":1}`, state))
	if je != nil {
		t.Fatal(je)
	}
	reqs = res["inputRequests"].(map[string]any)
	if len(reqs) != 2 || reqs["user_name"] != nil {
		t.Fatalf("round 2 asks %v, want greeting and client_roots", reqs)
	}
	state = res["requestState"].(string)
	res, je = statelessCall(t, s, "three", allCaps, fmt.Sprintf(`,"requestState":%q,"inputResponses":{"greeting":{"role":"assistant","model":"m","content":{"type":"text","text":"hi"}},"client_roots":{"roots":[]}}`, state))
	if je != nil {
		t.Fatal(je)
	}
	if res["resultType"] != "complete" || !strings.Contains(fmt.Sprint(res["content"]), "Bo hi 0") {
		t.Fatalf("round 3: %v", res)
	}

	// Answers that are not results of the question's method are invalid
	// params; a null answer is no answer.
	for _, bad := range []string{`12345`, `{"action":"maybe"}`, `"accept"`} {
		_, je = statelessCall(t, s, "two_rounds", allCaps, `,"inputResponses":{"step1":`+bad+`}`)
		if je == nil || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("answer %s: error %v, want invalid params", bad, je)
		}
	}
	res, je = statelessCall(t, s, "two_rounds", allCaps, `,"inputResponses":{"step1":null}`)
	if je != nil || res["resultType"] != "input_required" {
		t.Errorf("null answer: %v %v, want input_required", res, je)
	}

	// Each round seals a different state.
	r1, _ := statelessCall(t, s, "two_rounds", allCaps, "")
	r2, _ := statelessCall(t, s, "two_rounds", allCaps, fmt.Sprintf(`,"requestState":%q,"inputResponses":{"step1":{"action":"accept","content":{"name":"A"}}}`, r1["requestState"]))
	if r2["requestState"] == r1["requestState"] || r2["inputRequests"].(map[string]any)["step2"] == nil {
		t.Fatalf("round 2 = %v", r2)
	}

	// A question the client cannot answer is a missing capability.
	_, je = statelessCall(t, s, "three", `{"elicitation":{}}`, "")
	if je == nil || je.Code != protocol.CodeMissingRequiredClientCapability {
		t.Fatalf("undeclared sampling: %v", je)
	}
}
