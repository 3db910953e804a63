package agent

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ConversationFormat marks a saved conversation, so that a later version
// can read older files.
const ConversationFormat = "ferry.conversation/1"

// Conversation is the messages of a chat so far.
type Conversation struct {
	Format string `json:"format"`
	// Model is the model the conversation was held with
	// ("PROVIDER/MODEL"), for the user's information.
	Model    string    `json:"model,omitempty"`
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages"`
	// Usage is the tokens of every turn so far.
	Usage Usage `json:"usage"`
}

// MarshalJSON writes the conversation with its format marker.
func (c *Conversation) marshal() ([]byte, error) {
	cc := *c
	cc.Format = ConversationFormat
	if cc.Messages == nil {
		cc.Messages = []Message{}
	}
	return json.Marshal(&cc, jsontext.WithIndent("  "))
}

// Save writes the conversation to path as JSON, readable by the user only
// (it may hold what the tools returned). The file is replaced at once, so
// that a crash leaves the old one.
func (c *Conversation) Save(path string) error {
	data, err := c.marshal()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// LoadConversation reads a conversation that [Conversation.Save] wrote.
func LoadConversation(path string) (*Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConversation(data)
}

// ParseConversation reads a saved conversation and checks that it can be
// sent again: every tool call answered by the message after it.
func ParseConversation(data []byte) (*Conversation, error) {
	var c Conversation
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("not a saved conversation: %w", err)
	}
	if c.Format != ConversationFormat {
		return nil, fmt.Errorf("not a saved conversation (format %q, want %q)", c.Format, ConversationFormat)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// check verifies the invariant the loop keeps: the tool calls of an
// assistant message are answered, each once, by the tool message that
// follows it.
func (c *Conversation) check() error {
	for i, m := range c.Messages {
		switch m.Role {
		case User, Assistant, Tool:
		default:
			return fmt.Errorf("message %d: unknown role %q", i+1, m.Role)
		}
		calls := m.ToolCalls()
		if m.Role != Assistant || len(calls) == 0 {
			continue
		}
		if i+1 >= len(c.Messages) || c.Messages[i+1].Role != Tool {
			return fmt.Errorf("message %d: its tool calls have no results after them", i+1)
		}
		answered := map[string]int{}
		for _, p := range c.Messages[i+1].Parts {
			if p.Type == ToolResultPart && p.Result != nil {
				answered[p.Result.CallID]++
			}
		}
		for _, call := range calls {
			if answered[call.ID] != 1 {
				return fmt.Errorf("message %d: tool call %q is answered %d times", i+1, call.ID, answered[call.ID])
			}
		}
	}
	return nil
}

// Clear forgets the messages (the usage stays).
func (c *Conversation) Clear() { c.Messages = nil }
