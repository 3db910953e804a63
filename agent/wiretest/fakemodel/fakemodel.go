// Package fakemodel is a scripted language model behind the real
// provider-side wire encoders: Ollama's own OpenAI Chat Completions and
// Anthropic Messages translation middleware (github.com/ollama/ollama,
// pinned in this module's go.mod), the code an Ollama server runs in
// front of its models. A request goes through the middleware exactly as
// it would at an Ollama server; the model that answers is a Brain, a Go
// function of the conversation, instead of weights, and its answers go
// back through the middleware's encoders as Ollama's NDJSON chat stream.
//
// No language model can run on the machines ferry is tested on; this is
// the closest thing: the official SDKs talk to an encoder that real
// servers use, and the "model" is deterministic.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/middleware"
)

// Brain decides the model's reply to a request (Ollama's form of it, as
// the middleware made it from the provider's).
type Brain func(req *api.ChatRequest) Reply

// Reply is what the model answers.
type Reply struct {
	// Text is streamed in pieces of a few characters.
	Text  string
	Calls []Call
	// Done is Ollama's done_reason: "stop" (the default) or "length".
	Done string
	// Delay is waited before each piece (a model that takes its time).
	Delay time.Duration
}

// Call is a tool call the model makes.
type Call struct {
	Name string
	Args map[string]any
}

// Exchange is one request and what it was answered.
type Exchange struct {
	// Path is "/v1/chat/completions" or "/v1/messages".
	Path string
	// Raw is the provider-format body the SDK sent.
	Raw []byte
	// Chat is the request as the middleware translated it.
	Chat *api.ChatRequest
	// Reply is what the brain answered.
	Reply Reply
}

// Server serves the brain at /v1/chat/completions (OpenAI) and
// /v1/messages (Anthropic).
type Server struct {
	Brain Brain
	// Model names the model in replies.
	Model string

	mu        sync.Mutex
	exchanges []Exchange
	nextID    int
}

// Handler returns the HTTP handler: gin routes with Ollama's middleware in
// front of the brain.
func (s *Server) Handler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.POST("/v1/chat/completions", s.keepRaw, middleware.ChatMiddleware(), s.chat)
	r.POST("/v1/messages", s.keepRaw, middleware.AnthropicMessagesMiddleware(), s.chat)
	return r
}

// keepRaw keeps the provider-format body for the tests to look at.
func (s *Server) keepRaw(c *gin.Context) {
	raw, err := io.ReadAll(c.Request.Body)
	if err != nil {
		c.AbortWithStatus(http.StatusBadRequest)
		return
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(raw))
	c.Set("ferry.raw", raw)
}

// Exchanges returns the requests so far and their answers.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// chat is the model: Ollama's /api/chat, fed by the middleware.
func (s *Server) chat(c *gin.Context) {
	var req api.ChatRequest
	if err := json.NewDecoder(c.Request.Body).Decode(&req); err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	reply := s.Brain(&req)
	raw, _ := c.Get("ferry.raw")
	s.mu.Lock()
	s.exchanges = append(s.exchanges, Exchange{Path: c.FullPath(), Raw: raw.([]byte), Chat: &req, Reply: reply})
	first := s.nextID
	s.nextID += len(reply.Calls)
	s.mu.Unlock()

	model := s.Model
	if model == "" {
		model = req.Model
	}
	calls := make([]api.ToolCall, len(reply.Calls))
	for i, call := range reply.Calls {
		args := api.NewToolCallFunctionArguments()
		for _, k := range slices.Sorted(maps.Keys(call.Args)) {
			args.Set(k, call.Args[k])
		}
		calls[i] = api.ToolCall{ID: fmt.Sprintf("call_%d", first+i+1),
			Function: api.ToolCallFunction{Index: i, Name: call.Name, Arguments: args}}
	}
	done := reply.Done
	if done == "" {
		done = "stop"
	}
	prompt, eval := tokens(&req), utf8.RuneCountInString(reply.Text)/4+8*len(calls)+1
	last := api.ChatResponse{Model: model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant"},
		Done: true, DoneReason: done, Metrics: api.Metrics{PromptEvalCount: prompt, EvalCount: eval}}
	if req.Stream != nil && !*req.Stream {
		// One merged response, as Ollama answers stream:false.
		last.Message.Content, last.Message.ToolCalls = reply.Text, calls
		write(c, last)
		return
	}
	for _, piece := range pieces(reply.Text, 12) {
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-c.Request.Context().Done():
				return
			}
		}
		if !write(c, api.ChatResponse{Model: model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant", Content: piece}}) {
			return
		}
	}
	if len(calls) > 0 {
		// Ollama sends tool calls whole, in one chunk.
		write(c, api.ChatResponse{Model: model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant", ToolCalls: calls}})
	}
	write(c, last)
}

// write sends one NDJSON object, in one Write as the middleware wants.
func write(c *gin.Context, r api.ChatResponse) bool {
	b, err := json.Marshal(r)
	if err != nil {
		return false
	}
	if _, err := c.Writer.Write(b); err != nil {
		return false
	}
	c.Writer.Flush()
	return true
}

// pieces cuts text into pieces of about n runes, at spaces when it can.
func pieces(text string, n int) []string {
	var out []string
	for text != "" {
		r := []rune(text)
		if len(r) <= n {
			out = append(out, text)
			break
		}
		b := len(string(r[:n]))
		if sp := strings.LastIndexByte(text[:b], ' '); sp > 0 {
			b = sp + 1
		}
		out = append(out, text[:b])
		text = text[b:]
	}
	return out
}

// tokens is a rough prompt size, so that usage is not zero.
func tokens(req *api.ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += utf8.RuneCountInString(m.Content) / 4
	}
	b, _ := json.Marshal(req.Tools)
	return n + len(b)/4 + 1
}
