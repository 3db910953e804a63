package client

import (
	"context"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// handler serves what a server sends the client: legacy server-to-client
// requests (answered with the same callbacks as stateless input requests) and
// notifications.
type handler struct{ c *Client }

func (h *handler) Handle(ctx context.Context, m *jsonrpc.Message) (any, error) {
	c := h.c
	if m.IsRequest() {
		return c.answerRequest(ctx, m.ID, m.Method, m.Params)
	}
	switch m.Method {
	case protocol.NotificationProgress:
		var p protocol.ProgressParams
		if json.Unmarshal(m.Params, &p) == nil {
			c.onProgress(&p)
		}
	case protocol.NotificationMessage:
		if f := c.opts.OnLog; f != nil {
			var p protocol.LoggingMessageParams
			if json.Unmarshal(m.Params, &p) == nil {
				f(&p)
			}
		}
	case protocol.NotificationToolsListChanged, protocol.NotificationPromptsListChanged, protocol.NotificationResourcesListChanged:
		if c.routeToSubscription(m) {
			return nil, nil
		}
		if f := c.opts.OnListChanged; f != nil {
			f(m.Method)
		}
	case protocol.NotificationResourceUpdated:
		if c.routeToSubscription(m) {
			return nil, nil
		}
		if f := c.opts.OnResourceUpdated; f != nil {
			var p protocol.ResourceUpdatedParams
			if json.Unmarshal(m.Params, &p) == nil {
				f(p.URI)
			}
		}
	case protocol.NotificationSubscriptionsAcknowledged, protocol.NotificationCancelled, protocol.NotificationTasks:
		c.routeToSubscription(m)
	case protocol.NotificationElicitationComplete:
		if f := c.opts.OnElicitationComplete; f != nil {
			var p protocol.ElicitationCompleteParams
			if json.Unmarshal(m.Params, &p) == nil {
				f(p.ElicitationID)
			}
		}
	}
	return nil, nil
}
