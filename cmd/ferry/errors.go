package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// toolError is a call whose result has isError set (exit code 5).
type toolError struct {
	server, tool, text string
}

func (e *toolError) Error() string {
	msg := fmt.Sprintf("tool %s.%s reported an error", e.server, e.tool)
	if e.text != "" {
		msg += ": " + e.text
	}
	return msg
}

// callError is a tools/call run as a task that failed or was cancelled
// (exit code 5): the tool's outcome, as an isError result is. A JSON-RPC
// error answering a request is a protocol error instead (exit code 6).
type callError struct{ err error }

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// exitCode maps an error to the exit code; for several errors (servers
// failing together), the first one's.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := j.Unwrap(); len(errs) > 0 {
			return exitCode(errs[0])
		}
	}
	if code, ok := agentExitCode(err); ok {
		return code
	}
	var ue *usageError
	var te *toolError
	var ce *callError
	var cfg *config.Error
	var ae *authError
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ae), refused(err) != nil:
		return exitAuth
	case errors.As(err, &te), errors.As(err, &ce):
		return exitTool
	}
	switch host.KindOf(err) {
	case host.KindConfig, host.KindUnknown, host.KindNotAllowed, host.KindDisabled:
		return exitUsage
	case host.KindAuth:
		return exitAuth
	case host.KindUnreachable, host.KindTimeout:
		return exitUnreachable
	}
	switch {
	case errors.As(err, &cfg):
		return exitUsage
	case errors.As(err, &rpc):
		return exitProtocol
	}
	return exitError
}

var codeKinds = map[int]string{exitUsage: "usage", exitError: "error", exitAuth: "auth", exitUnreachable: "unreachable",
	exitTool: "tool_error", exitProtocol: "protocol_error", exitNotApproved: "not_approved"}

// errorLine is the one line of JSON written on stderr for a failure in
// JSON mode.
type errorLine struct {
	Error struct {
		Code     int    `json:"code"`
		Kind     string `json:"kind"`
		Message  string `json:"message"`
		Server   string `json:"server,omitempty"`
		Variable string `json:"variable,omitempty"`
		RPCCode  int64  `json:"rpcCode,omitzero"`
		Stderr   string `json:"stderr,omitempty"`
	} `json:"error"`
}

// fail reports err and returns its exit code.
func (o *cli) fail(err error) int {
	code := exitCode(err)
	if o.json {
		var l errorLine
		l.Error.Code, l.Error.Kind, l.Error.Message = code, codeKinds[code], err.Error()
		first := err
		if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
			first = j.Unwrap()[0]
		}
		var he *host.Error
		if errors.As(first, &he) {
			l.Error.Server, l.Error.Stderr, l.Error.Kind = he.Server, he.Stderr, he.Kind.String()
		}
		var ce *config.Error
		if errors.As(first, &ce) {
			l.Error.Kind, l.Error.Server = "config", ce.Server
		}
		l.Error.Variable = config.MissingVar(first)
		var rpc *jsonrpc.Error
		if errors.As(first, &rpc) {
			l.Error.RPCCode = rpc.Code
		}
		var te *toolError
		if errors.As(first, &te) {
			l.Error.Server = te.server
		}
		// A server's stderr may be any bytes: invalid UTF-8 is replaced,
		// not a reason to write half a line.
		b, _ := json.Marshal(&l, jsontext.AllowInvalidUTF8(true))
		if o.stderrTTY {
			b = terminalJSON(b)
		}
		fmt.Fprintf(o.stderr, "%s\n", b)
		return code
	}
	msg := err.Error()
	if short, ok := o.brief(err); ok && !o.verbose {
		msg = short + " (-v for detail)"
	}
	if strings.Contains(msg, "\n") {
		msg = strings.ReplaceAll(msg, "\n", "\n  ")
	}
	fmt.Fprintf(o.stderr, "ferry: %s\n", safe(msg))
	return code
}

// finish turns a command's error into the exit code.
func (o *cli) finish(err error) int {
	if o.term != nil {
		o.term.clearProgress()
	}
	if err == nil {
		return exitOK
	}
	return o.fail(err)
}
