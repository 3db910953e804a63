// Package openai is the agent's model behind the OpenAI Chat Completions
// API. It also serves every endpoint that speaks the same API: Ollama,
// vLLM, llama.cpp's server, LM Studio, DeepSeek, Qwen through DashScope's
// compatible mode, OpenRouter.
//
// Replies stream (server-sent events, with stream_options.include_usage
// so that the last chunk carries the usage); tool calls arrive in
// fragments, joined by their index.
//
// The client is ferry's own, of the one API it uses: OpenAI's official Go
// SDK made the ferry command's build take twice the time and memory, and
// its binary 2.5 times the size. The wire test module (agent/wiretest)
// holds it to the SDK's requests and readings of replies.
package openai

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

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configure a [Model].
type Options struct {
	// Model is the model's name ("gpt-4o", "qwen-plus", "llama3.2").
	Model string
	// APIKey is the key; empty reads OPENAI_API_KEY. An endpoint other
	// than OpenAI's may need none.
	APIKey string
	// BaseURL is the API's root, ending in /v1 ("http://127.0.0.1:11434/v1");
	// empty reads OPENAI_BASE_URL, else OpenAI's.
	BaseURL string
	// HTTPClient makes the requests (default: one that waits at most 10
	// minutes for an answer to begin). Redirects to another origin are
	// refused whatever its CheckRedirect says: the key must not go there.
	HTTPClient *http.Client
	// MaxRetries is how often a failed request is retried (default 2, as
	// in the official SDK; negative: never).
	MaxRetries int
}

// Model is a model behind the Chat Completions API.
type Model struct {
	api      apihttp.Client
	model    string
	official bool // OpenAI's own API, which wants max_completion_tokens
}

// New returns the model. It fails when OpenAI's own API is used without a
// key, or the base URL is not an http or https URL.
func New(o Options) (*Model, error) {
	key := cmp.Or(o.APIKey, os.Getenv("OPENAI_API_KEY"))
	base := cmp.Or(o.BaseURL, os.Getenv("OPENAI_BASE_URL"), DefaultBaseURL)
	official := strings.Contains(base, "api.openai.com")
	if key == "" && official {
		return nil, &agent.ModelError{Provider: "openai", Kind: agent.ModelAuth,
			Err: errors.New("no API key: set OPENAI_API_KEY, or the key in the configuration")}
	}
	endpoint, err := apihttp.Endpoint(base, "chat/completions")
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	m := &Model{model: o.Model, official: official, api: apihttp.Client{
		HTTP: apihttp.HTTPClient(o.HTTPClient), URL: endpoint, Header: header(key, official), MaxRetries: apihttp.Retries(o.MaxRetries),
	}}
	return m, nil
}

// header holds the credentials. A local server takes any key, and some
// reject a request without one. The organization and project of
// OpenAI's own API (read from the variables its SDK reads) go only there.
func header(key string, official bool) http.Header {
	h := http.Header{"Authorization": {"Bearer " + cmp.Or(key, "none")}}
	if !official {
		return h
	}
	if org := os.Getenv("OPENAI_ORG_ID"); org != "" {
		h.Set("OpenAI-Organization", org)
	}
	if project := os.Getenv("OPENAI_PROJECT_ID"); project != "" {
		h.Set("OpenAI-Project", project)
	}
	return h
}

// Generate sends the request as a streamed chat completion.
func (m *Model) Generate(ctx context.Context, req *agent.Request, stream func(agent.Delta)) (*agent.Reply, error) {
	body, err := json.Marshal(m.params(req))
	if err != nil {
		return nil, &agent.ModelError{Provider: "openai", Err: err}
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

// wrapError classifies a failed request.
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
		return agent.ClassifyStatus("openai", se.Status, errorMessage(se.Body))
	}
	return agent.ClassifyTransport("openai", err)
}

// apiError is the error object of an answer with an error status, and of
// an error in the middle of a stream.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// errorMessage is what the provider said in an error's body: the
// message of its error object, else the start of the body when it is
// short text (a proxy's "404 page not found").
func errorMessage(body []byte) string {
	var e struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil {
		return e.Error.Message
	}
	return apihttp.ShortText(body)
}
