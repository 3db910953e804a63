// Package skills implements the Skills extension of MCP
// (io.modelcontextprotocol/skills, SEP-2640): a server publishes skills,
// folders with a SKILL.md and supporting files in the format agents load
// from disk, and a client lists them, loads one and reads its files,
// verifying each against the skill's manifest.
//
// On a server, [Serve] declares the extension and serves skills/list,
// skills/get and resources/directory/read; [Server.AddFS] publishes the
// skills of an fs.FS (a folder on disk, an embed.FS), every file a
// resource under skill://. On a client, [NewClient] lists and gets skills;
// [Client.Load] reads a skill's SKILL.md and verifies it, and only a
// [Loaded] skill reads its other files.
//
// Both sides work over either protocol era; the extension is declared in
// the capabilities of both.
package skills

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// Extension is the identifier of the Skills extension.
const Extension = "io.modelcontextprotocol/skills"

// The methods of the extension.
const (
	MethodList          = "skills/list"
	MethodGet           = "skills/get"
	MethodReadDirectory = "resources/directory/read"
)

// The limits of one skill: hosts must support skills up to them, servers
// should not serve larger ones. Counted over the skill's resources,
// SKILL.md included.
const (
	MaxResources = 512
	MaxTotalSize = 16 << 20
)

// DirectoryMIMEType is the mimeType of directory resources.
const DirectoryMIMEType = "inode/directory"

// SkillFile is the name of the file that makes a directory a skill.
const SkillFile = "SKILL.md"

// Resource is a file of a skill with the digest ("sha256:" and 64
// lowercase hex digits) and the size of its raw bytes.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Skill is the entry of one skill, as skills/list and skills/get return
// it.
type Skill struct {
	// URI is the URI of the skill's SKILL.md.
	URI string
	// Frontmatter is SKILL.md's YAML frontmatter as a JSON object; name
	// and description are always present.
	Frontmatter map[string]any
	// Resources is the complete manifest of the skill's files, SKILL.md
	// included; nil when Dynamic.
	Resources []Resource
	// Dynamic reports a skill whose content is generated, so that no
	// stable digests can be published (resources: "dynamic").
	Dynamic bool
}

// skillWire is Skill on the wire: resources is an array or "dynamic".
type skillWire struct {
	URI         string         `json:"uri"`
	Frontmatter jsontext.Value `json:"frontmatter"`
	Resources   jsontext.Value `json:"resources"`
}

var dynamicJSON = jsontext.Value(`"dynamic"`)

// MarshalJSON encodes the entry, its frontmatter with sorted keys.
func (s Skill) MarshalJSON() ([]byte, error) {
	fm, err := json.Marshal(s.Frontmatter, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	res := dynamicJSON
	if !s.Dynamic {
		if res, err = json.Marshal(resourcesOrEmpty(s.Resources)); err != nil {
			return nil, err
		}
	}
	return json.Marshal(skillWire{URI: s.URI, Frontmatter: fm, Resources: res})
}

func resourcesOrEmpty(r []Resource) []Resource {
	if r == nil {
		return []Resource{}
	}
	return r
}

// UnmarshalJSON decodes an entry, refusing one whose resources are
// neither an array nor "dynamic" ("hosts MUST NOT load it") or whose
// frontmatter is not an object.
func (s *Skill) UnmarshalJSON(b []byte) error {
	var w skillWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var fm map[string]any
	if err := json.Unmarshal(w.Frontmatter, &fm); err != nil || fm == nil {
		return fmt.Errorf("skill %q: frontmatter is not an object", w.URI)
	}
	*s = Skill{URI: w.URI, Frontmatter: fm}
	switch {
	case bytes.Equal(w.Resources, dynamicJSON):
		s.Dynamic = true
	case len(w.Resources) > 0 && w.Resources[0] == '[':
		if err := json.Unmarshal(w.Resources, &s.Resources); err != nil {
			return fmt.Errorf("skill %q: resources: %w", w.URI, err)
		}
	default:
		return fmt.Errorf("skill %q: resources is %s, neither an array nor \"dynamic\"", w.URI, orMissing(w.Resources))
	}
	return nil
}

func orMissing(v jsontext.Value) string {
	if len(v) == 0 {
		return "missing"
	}
	return string(v)
}

// Name returns the skill's name (frontmatter.name).
func (s *Skill) Name() string { n, _ := s.Frontmatter["name"].(string); return n }

// Description returns the skill's description (frontmatter.description).
func (s *Skill) Description() string { d, _ := s.Frontmatter["description"].(string); return d }

// ListParams are the params of skills/list.
type ListParams struct {
	Meta   protocol.Meta   `json:"_meta,omitempty"`
	Cursor protocol.Cursor `json:"cursor,omitempty"`
}

// ListResult is the result of skills/list.
type ListResult struct {
	protocol.ResultFields
	protocol.CacheFields
	Skills     []Skill         `json:"skills"`
	NextCursor protocol.Cursor `json:"nextCursor,omitempty"`
}

// GetParams are the params of skills/get.
type GetParams struct {
	Meta protocol.Meta `json:"_meta,omitempty"`
	URI  string        `json:"uri"`
}

// GetResult is the result of skills/get.
type GetResult struct {
	protocol.ResultFields
	protocol.CacheFields
	Skill Skill `json:"skill"`
}

// ReadDirectoryParams are the params of resources/directory/read.
type ReadDirectoryParams struct {
	Meta   protocol.Meta   `json:"_meta,omitempty"`
	URI    string          `json:"uri"`
	Cursor protocol.Cursor `json:"cursor,omitempty"`
}

// ReadDirectoryResult is the result of resources/directory/read: the
// direct children of a directory, subdirectories with mimeType
// [DirectoryMIMEType].
type ReadDirectoryResult struct {
	protocol.ResultFields
	Resources  []protocol.Resource `json:"resources"`
	NextCursor protocol.Cursor     `json:"nextCursor,omitempty"`
}
