package agent

import (
	"context"

	"github.com/ferrymcp/ferry/protocol"
)

// Elicit passes a server's question to ask, which puts it to the user,
// and reports it and the answer as an [EventElicitation]: the host's
// client options route elicitation/create here, as they route sampling
// to [Agent.Sample].
func (a *Agent) Elicit(ctx context.Context, server string, p *protocol.ElicitParams,
	ask func(ctx context.Context, server string, p *protocol.ElicitParams) (*protocol.ElicitResult, error)) (*protocol.ElicitResult, error) {
	rec := &ElicitationRecord{Server: server, Mode: p.Mode, Message: p.Message, URL: p.URL}
	if rec.Mode == "" {
		rec.Mode = protocol.ElicitForm
	}
	res, err := ask(ctx, server, p)
	switch {
	case err != nil:
		rec.Error = err.Error()
	case res != nil:
		rec.Action = res.Action
	}
	a.emit(Event{Kind: EventElicitation, Elicitation: rec})
	return res, err
}
