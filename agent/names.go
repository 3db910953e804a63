package agent

import (
	"fmt"
	"hash/fnv"
	"strconv"
)

// MaxNameLen is the longest tool name the providers accept: OpenAI's
// function names "must be a-z, A-Z, 0-9, or contain underscores and
// dashes, with a maximum length of 64"; Anthropic's tool names match
// ^[a-zA-Z0-9_-]{1,64}$ too.
const MaxNameLen = 64

// Names maps tool names (an MCP tool may be called anything, such as
// "files/read" or a name of 100 characters) to names every provider
// accepts, and back. A name that already follows the rules keeps it; any
// other gets its bad characters replaced by "_", is cut to leave room, and
// is given eight hex digits of a hash of the original, so that the map
// does not depend on which other tools there are and never maps two tools
// to one name.
type Names struct {
	toModel   map[string]string
	fromModel map[string]string
}

// NewNames maps names.
func NewNames(names []string) *Names {
	n := &Names{toModel: make(map[string]string, len(names)), fromModel: make(map[string]string, len(names))}
	for _, name := range names {
		if validName(name) {
			n.put(name, name)
		}
	}
	for _, name := range names {
		if _, done := n.toModel[name]; done {
			continue
		}
		base := hashedName(sanitizeName(name), name)
		m := base
		for i := 2; n.taken(m); i++ {
			// A hash collision: vanishingly rare, settled by a counter.
			suffix := "-" + strconv.Itoa(i)
			m = base[:min(len(base), MaxNameLen-len(suffix))] + suffix
		}
		n.put(name, m)
	}
	return n
}

func (n *Names) taken(model string) bool {
	_, ok := n.fromModel[model]
	return ok
}

func (n *Names) put(name, model string) {
	n.toModel[name] = model
	n.fromModel[model] = name
}

// Model returns the name the model knows a tool by.
func (n *Names) Model(name string) string {
	if m, ok := n.toModel[name]; ok {
		return m
	}
	return name
}

// Tool returns the tool a model's name stands for.
func (n *Names) Tool(model string) (string, bool) {
	name, ok := n.fromModel[model]
	return name, ok
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

// hashedName cuts name to leave room for "-" and eight hex digits of a
// hash of full.
func hashedName(name, full string) string {
	h := fnv.New32a()
	h.Write([]byte(full))
	const room = MaxNameLen - 9
	if len(name) > room {
		name = name[:room]
	}
	return fmt.Sprintf("%s-%08x", name, h.Sum32())
}
