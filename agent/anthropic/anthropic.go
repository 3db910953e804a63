// Package anthropic is the agent's model behind the Anthropic Messages
// API.
//
// Replies stream (server-sent events); the events are joined into the
// message, including a tool call's input, which arrives as fragments of
// JSON (input_json_delta) that are valid only once the block ends.
//
// The client is ferry's own, of the one API it uses, rather than
// Anthropic's official Go SDK, whose generated code for all of the
// provider's APIs weighs on the ferry command's build and binary. The
// wire test module (agent/wiretest) holds it to the SDK's requests and
// readings of replies.
package anthropic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/internal/apihttp"
)

// DefaultMaxTokens bounds a reply when the request does not (the API
// requires max_tokens).
const DefaultMaxTokens = 4096

// DefaultBaseURL is Anthropic's API.
const DefaultBaseURL = "https://api.anthropic.com/"

// apiVersion is the version of the Messages API the client speaks.
const apiVersion = "2023-06-01"

// Options configure a [Model].
type Options struct {
	// Model is the model's name ("claude-sonnet-4-5").
	Model string
	// APIKey is the key; empty reads ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL is the API's host, without /v1 ("http://127.0.0.1:8080");
	// empty reads ANTHROPIC_BASE_URL, else Anthropic's.
	BaseURL string
	// MaxTokens is max_tokens when the request sets none (default
	// [DefaultMaxTokens]).
	MaxTokens int64
	// HTTPClient makes the requests (default: one that waits at most 10
	// minutes for an answer to begin). Redirects to another origin are
	// refused whatever its CheckRedirect says: the key must not go there.
	HTTPClient *http.Client
	// MaxRetries is how often a failed request is retried (default 2, as
	// in the official SDK; negative: never).
	MaxRetries int
}

// Model is a model behind the Messages API.
type Model struct {
	api       apihttp.Client
	model     string
	maxTokens int64
}

// New returns the model. It fails when no key is given for Anthropic's
// own API, or the base URL is not an http or https URL.
func New(o Options) (*Model, error) {
	key := cmp.Or(o.APIKey, os.Getenv("ANTHROPIC_API_KEY"))
	base := cmp.Or(o.BaseURL, os.Getenv("ANTHROPIC_BASE_URL"))
	if key == "" && (base == "" || strings.Contains(base, "api.anthropic.com")) {
		return nil, &agent.ModelError{Provider: "anthropic", Kind: agent.ModelAuth,
			Err: errors.New("no API key: set ANTHROPIC_API_KEY, or the key in the configuration")}
	}
	endpoint, err := apihttp.Endpoint(cmp.Or(base, DefaultBaseURL), "v1/messages")
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	m := &Model{model: o.Model, maxTokens: o.MaxTokens, api: apihttp.Client{
		HTTP: apihttp.HTTPClient(o.HTTPClient), URL: endpoint, MaxRetries: apihttp.Retries(o.MaxRetries),
		// A local server takes any key.
		Header: http.Header{"X-Api-Key": {cmp.Or(key, "none")}, "Anthropic-Version": {apiVersion}},
	}}
	if m.maxTokens <= 0 {
		m.maxTokens = DefaultMaxTokens
	}
	return m, nil
}

// Generate sends the request as a streamed message.
func (m *Model) Generate(ctx context.Context, req *agent.Request, stream func(agent.Delta)) (*agent.Reply, error) {
	body, err := json.Marshal(m.params(req))
	if err != nil {
		return nil, &agent.ModelError{Provider: "anthropic", Err: err}
	}
	s, err := m.api.Stream(ctx, body)
	if err != nil {
		return nil, wrapError(ctx, err)
	}
	defer s.Close()
	var acc accumulator
	if err := acc.read(s, stream); err != nil {
		return nil, wrapError(ctx, err)
	}
	return acc.reply()
}

// apiError is the error object of an answer with an error status, and of
// an error event.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *apiError) String() string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

func wrapError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var me *agent.ModelError
	if errors.As(err, &me) {
		return err
	}
	var se *apihttp.StatusError
	if errors.As(err, &se) {
		return agent.ClassifyStatus("anthropic", se.Status, errorMessage(se.Body))
	}
	return agent.ClassifyTransport("anthropic", err)
}

// errorMessage is what the provider said in an error's body ("type:
// message"), else the start of the body when it is short text.
func errorMessage(body []byte) string {
	var e struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return e.Error.String()
	}
	return apihttp.ShortText(body)
}
