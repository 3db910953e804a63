package interop

// The client side of the server-everything tests, shared by the stdio
// (everything_test.go) and HTTP (http_everything_test.go) ones.

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
)

// newEverything returns the state of a connection to server-everything,
// before it is connected.
func newEverything() *everything {
	return &everything{
		logs:    &slogRecorder{},
		msgs:    make(chan *protocol.LoggingMessageParams, 256),
		updates: make(chan string, 64),
	}
}

// clientOptions are the options of a client connected to
// server-everything: canned answers to its sampling, elicitation and roots
// requests, counted in x, and its log messages and resource updates
// queued in x. version pins a revision (empty: detect).
func (x *everything) clientOptions(version string) *client.Options {
	return &client.Options{
		Info:             protocol.Implementation{Name: "ferry-interop", Version: "0.0.1"},
		ProtocolVersion:  version,
		ProbeTimeout:     10 * time.Second,
		RequestTimeout:   20 * time.Second,
		Logger:           slog.New(x.logs),
		ElicitationModes: []string{protocol.ElicitForm, protocol.ElicitURL},
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			x.mu.Lock()
			x.elicits = append(x.elicits, cmp.Or(p.Mode, protocol.ElicitForm))
			x.mu.Unlock()
			if p.Mode == protocol.ElicitURL {
				if p.URL == "" || p.ElicitationID == "" {
					return nil, fmt.Errorf("url elicitation without url or id: %+v", p)
				}
				return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
			}
			content, err := elicitFormValues(p.RequestedSchema)
			if err != nil {
				return nil, err
			}
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, nil
		},
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			x.mu.Lock()
			x.samples++
			x.mu.Unlock()
			if len(p.Messages) == 0 || p.MaxTokens <= 0 {
				return nil, fmt.Errorf("odd sampling request: %+v", p)
			}
			return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: cannedModel, StopReason: "endTurn",
				Content: protocol.SamplingContent{protocol.TextContent(cannedSample)}}, nil
		},
		Roots: func(ctx context.Context) ([]protocol.Root, error) {
			x.mu.Lock()
			x.roots++
			x.mu.Unlock()
			return []protocol.Root{{URI: testRootURI, Name: testRootName}}, nil
		},
		OnLog: func(p *protocol.LoggingMessageParams) {
			select {
			case x.msgs <- p:
			default:
			}
		},
		OnResourceUpdated: func(uri string) {
			select {
			case x.updates <- uri:
			default:
			}
		},
	}
}
