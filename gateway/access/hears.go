package access

import (
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
)

// Hears is the gateway's Options.Hears, under the policy in force when
// the notice comes: a client hears a resource's updates only when its
// caller may read the resource (a subscription outlives the rules it
// was allowed by), and a server's log messages only when its caller may
// use something the endpoint shows of that server (a tool, a prompt, a
// resource or a template), for what a server logs may tell what the
// rules keep from the caller.
func (l *Live) Hears(c *intercept.Caller, e *gateway.Endpoint, n gateway.Notice) bool {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return true
	}
	if n.Method == protocol.NotificationResourceUpdated {
		return p.Visible(c, Target{Kind: Resource, Name: n.URI})
	}
	sep := e.Separator()
	for o := range e.Offers(n.Server) {
		if p.Visible(c, offerTarget(o, e, n.Server, sep)) {
			return true
		}
	}
	return false
}

// offerTarget names o as the rules name what the endpoint shows (namer).
func offerTarget(o gateway.Offer, e *gateway.Endpoint, server, sep string) Target {
	switch o.Kind {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		k := Tool
		if o.Kind == protocol.MethodPromptsGet {
			k = Prompt
		}
		t := Target{Kind: k, Name: server + sep + o.UpstreamName}
		if e.View != "" {
			t.Alias = e.View + ":" + o.Name
		}
		return t
	}
	return Target{Kind: Resource, Name: o.Name}
}
