package access

import (
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
)

// Hears is the gateway's Options.Hears: the client of a session hears
// the log messages of a server only when its caller may use something
// the endpoint shows of that server (a tool, a prompt, a resource or a
// template, under the policy in force when the message comes), for a
// server's logs may tell what the rules keep from the caller.
func (l *Live) Hears(c *intercept.Caller, e *gateway.Endpoint, server string) bool {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return true
	}
	sep := e.Separator()
	for o := range e.Offers(server) {
		if p.Visible(c, offerTarget(o, e, server, sep)) {
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
