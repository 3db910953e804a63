package agent

import "github.com/ferrymcp/ferry/protocol"

// PromptMessages turns a prompt's messages into conversation messages,
// neighbours of the same role joined into one.
func PromptMessages(res *protocol.GetPromptResult) []Message {
	var out []Message
	for i := range res.Messages {
		m := &res.Messages[i]
		role := User
		if m.Role == protocol.RoleAssistant {
			role = Assistant
		}
		part := contentPart(&m.Content)
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, part)
			continue
		}
		out = append(out, Message{Role: role, Parts: []Part{part}})
	}
	return out
}
