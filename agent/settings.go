package agent

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
)

// Settings are the agent's settings in a configuration file: its "agent"
// member, next to the servers.
//
//	{
//	  "mcpServers": { ... },
//	  "agent": {
//	    "model": "openai/gpt-4o",
//	    "approval": "ask",
//	    "allow": ["memory__read_graph", "*__search_*"],
//	    "deny": ["*__delete_*"],
//	    "sampling": {"allow": ["everything"]},
//	    "providers": {"openai": {"apiKey": "${OPENAI_API_KEY}", "baseURL": "https://api.openai.com/v1"}}
//	  }
//	}
//
// Strings of providers may use ${VAR} as server entries do.
type Settings struct {
	// Model is "PROVIDER/MODEL".
	Model  string `json:"model,omitempty"`
	System string `json:"system,omitempty"`
	// Approval is "ask", "auto", "plan" or "deny".
	Approval string `json:"approval,omitempty"`
	// Allow and Deny are tool names or patterns (server__tool).
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Sampling lists the servers whose sampling requests are answered, or
	// refused, without asking.
	Sampling struct {
		Allow []string `json:"allow,omitempty"`
		Deny  []string `json:"deny,omitempty"`
	} `json:"sampling,omitzero"`
	MaxSteps       int   `json:"maxSteps,omitempty"`
	MaxTokens      int64 `json:"maxTokens,omitempty"`
	MaxResultBytes int   `json:"maxResultBytes,omitempty"`
	ContextTokens  int   `json:"contextTokens,omitempty"`
	// MaxResultTokens is the budget of a tool result, in tokens, and
	// ResultTokens that of a server's results or a tool's, by name
	// ("github", "github__search_code"): see [Limits.MaxResultTokens].
	MaxResultTokens int            `json:"maxResultTokens,omitempty"`
	ResultTokens    map[string]int `json:"resultTokens,omitempty"`
	// ToolSearch sets the thresholds of tool search (see
	// [Limits.ToolSearchTools]): {"tools": 40, "tokens": 10000}.
	ToolSearch struct {
		Tools  int `json:"tools,omitempty"`
		Tokens int `json:"tokens,omitempty"`
	} `json:"toolSearch,omitzero"`
	// MaxSamplingTokens, MaxToolBytes and MaxServerToolBytes are those of
	// [Limits].
	MaxSamplingTokens  int64 `json:"maxSamplingTokens,omitempty"`
	MaxToolBytes       int   `json:"maxToolBytes,omitempty"`
	MaxServerToolBytes int   `json:"maxServerToolBytes,omitempty"`
	// Providers hold each provider's key and base URL, by provider name.
	Providers map[string]ProviderSettings `json:"providers,omitempty"`
}

// ProviderSettings are a provider's key and address.
type ProviderSettings struct {
	APIKey  string `json:"apiKey,omitempty"`
	BaseURL string `json:"baseURL,omitempty"`
}

// ReadSettings reads the "agent" member of a configuration file (nil
// when it has none); vars expands ${VAR} in the providers' strings.
func ReadSettings(f *config.File, vars *config.Vars) (*Settings, error) {
	if f.Agent == nil {
		return nil, nil
	}
	return parseSettings(f.Path, f.Agent, vars)
}

func parseSettings(path string, raw jsontext.Value, vars *config.Vars) (*Settings, error) {
	var s Settings
	if err := json.Unmarshal(raw, &s, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("%s: agent: %w", path, settingError(err))
	}
	if s.Approval != "" {
		if _, err := ParseMode(s.Approval); err != nil {
			return nil, fmt.Errorf("%s: agent: %w", path, err)
		}
	}
	for name, p := range s.Providers {
		var err error
		if vars != nil {
			if p.APIKey, err = vars.Expand(p.APIKey); err != nil {
				return nil, fmt.Errorf("%s: agent: providers.%s.apiKey: %w", path, name, err)
			}
			if p.BaseURL, err = vars.Expand(p.BaseURL); err != nil {
				return nil, fmt.Errorf("%s: agent: providers.%s.baseURL: %w", path, name, err)
			}
		}
		s.Providers[name] = p
	}
	return &s, nil
}

// Limits are the limits the settings set (zero for the defaults).
func (s *Settings) Limits() Limits {
	return Limits{MaxSteps: s.MaxSteps, MaxTokens: s.MaxTokens, MaxResultBytes: s.MaxResultBytes, ContextTokens: s.ContextTokens,
		MaxSamplingTokens: s.MaxSamplingTokens, MaxToolBytes: s.MaxToolBytes, MaxServerToolBytes: s.MaxServerToolBytes,
		MaxResultTokens: s.MaxResultTokens, ResultTokens: s.ResultTokens,
		ToolSearchTools: s.ToolSearch.Tools, ToolSearchTokens: s.ToolSearch.Tokens}
}

// firstSet is a, or b when a is unset (zero).
func firstSet[T int | int64](a, b T) T {
	if a != 0 {
		return a
	}
	return b
}

// Merge fills what s leaves unset from t (an earlier file wins, as for
// servers).
func (s *Settings) Merge(t *Settings) *Settings {
	if s == nil {
		return t
	}
	if t == nil {
		return s
	}
	out := *s
	if out.Model == "" {
		out.Model = t.Model
	}
	if out.System == "" {
		out.System = t.System
	}
	if out.Approval == "" {
		out.Approval = t.Approval
	}
	out.Allow = append(append([]string(nil), out.Allow...), t.Allow...)
	out.Deny = append(append([]string(nil), out.Deny...), t.Deny...)
	out.Sampling.Allow = append(append([]string(nil), out.Sampling.Allow...), t.Sampling.Allow...)
	out.Sampling.Deny = append(append([]string(nil), out.Sampling.Deny...), t.Sampling.Deny...)
	out.MaxSteps = firstSet(out.MaxSteps, t.MaxSteps)
	out.MaxTokens = firstSet(out.MaxTokens, t.MaxTokens)
	out.MaxResultBytes = firstSet(out.MaxResultBytes, t.MaxResultBytes)
	out.ContextTokens = firstSet(out.ContextTokens, t.ContextTokens)
	out.MaxSamplingTokens = firstSet(out.MaxSamplingTokens, t.MaxSamplingTokens)
	out.MaxToolBytes = firstSet(out.MaxToolBytes, t.MaxToolBytes)
	out.MaxServerToolBytes = firstSet(out.MaxServerToolBytes, t.MaxServerToolBytes)
	out.MaxResultTokens = firstSet(out.MaxResultTokens, t.MaxResultTokens)
	out.ToolSearch.Tools = firstSet(out.ToolSearch.Tools, t.ToolSearch.Tools)
	out.ToolSearch.Tokens = firstSet(out.ToolSearch.Tokens, t.ToolSearch.Tokens)
	out.ResultTokens = mergeMaps(s.ResultTokens, t.ResultTokens)
	providers := map[string]ProviderSettings{}
	for k, v := range t.Providers {
		providers[k] = v
	}
	for k, v := range s.Providers {
		providers[k] = v
	}
	out.Providers = providers
	return &out
}

// mergeMaps is the entries of s, and those of t that s does not set.
func mergeMaps[V any](s, t map[string]V) map[string]V {
	if len(s) == 0 && len(t) == 0 {
		return nil
	}
	out := map[string]V{}
	for k, v := range t {
		out[k] = v
	}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// settingError says what is wrong with a setting in the configuration's
// words: where it is ("agent.providers.openai.apikey") and, for an
// unknown member, the members there are. json's own error names the Go
// type a member was read into.
func settingError(err error) error {
	var se *json.SemanticError
	if !errors.As(err, &se) || se.GoType == nil {
		return err
	}
	at := "agent" + strings.ReplaceAll(string(se.JSONPointer), "/", ".")
	if errors.Is(se.Err, json.ErrUnknownName) {
		return fmt.Errorf("unknown setting %q (there: %s)", at, strings.Join(members(se.GoType), ", "))
	}
	return fmt.Errorf("%q: %s where %s is wanted", at, jsonKindName(se.JSONKind), goKindName(se.GoType))
}

// members are the JSON names of a struct's fields.
func members(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

func jsonKindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a value"
}

func goKindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
