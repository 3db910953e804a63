package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// parser holds what every entry of a file shares.
type parser struct {
	file    string
	dir     string
	vars    Vars
	project string // Options.Project

	f       *File
	found   bool            // a servers object was found
	names   map[string]bool // of the servers read
	fileErr error           // a problem with the file as a whole
}

// entry is one server being read; err keeps the first problem.
type entry struct {
	p    *parser
	name string
	m    map[string]jsontext.Value
	err  error
	// urlKey is the key the URL was read from, for errors.
	urlKey string
}

func (e *entry) fail(key string, err error) {
	if e.err == nil {
		e.err = &Error{File: e.p.file, Server: e.name, Key: key, Err: err}
	}
}

// server reads one entry. A problem is kept in the Server's Err.
func (p *parser) server(name string, raw jsontext.Value) *Server {
	s := &Server{Name: name, Source: p.file}
	e := &entry{p: p, name: name}
	if name == "" {
		e.fail("", errors.New("the server's name is empty"))
	}
	if err := json.Unmarshal(raw, &e.m); err != nil {
		e.fail("", fmt.Errorf("must be an object, not %s", kindName(raw)))
		s.Err = e.err
		return s
	}
	e.read(s)
	if e.err == nil {
		e.check(s)
	}
	s.Err = e.err
	return s
}

// read interprets every known key; unknown keys (autoApprove,
// description, ...) are ignored.
func (e *entry) read(s *Server) {
	typ, hasType := e.str("type")
	if !hasType {
		typ, hasType = e.str("transport")
	}
	if cmd, ok := e.m["command"]; ok && len(cmd) > 0 && cmd[0] == '[' {
		words := e.strings("command")
		if len(words) == 0 {
			e.fail("command", errEmpty)
		} else {
			s.Command, s.Args = words[0], words[1:]
		}
	} else if c, ok := e.str("command"); ok {
		s.Command = c
	}
	if _, ok := e.m["args"]; ok {
		s.Args = append(s.Args, e.strings("args")...)
	} else if strings.ContainsAny(strings.TrimSpace(s.Command), " \t") && !exists(s.Command) {
		// "command": "npx -y pkg", without args.
		words := splitCommand(s.Command)
		s.Command, s.Args = words[0], words[1:]
	}
	s.Command, s.Args = unwrapCmd(s.Command, s.Args)
	s.Env = e.stringMap("env")
	if s.Env == nil {
		s.Env = e.stringMap("environment")
	}
	if d, ok := e.firstStr("cwd", "workingDirectory"); ok {
		s.Dir = e.dir(d)
	}
	urlKey := ""
	for _, k := range []string{"url", "serverUrl", "httpUrl"} {
		if u, ok := e.str(k); ok {
			s.URL, urlKey = u, k
			break
		}
	}
	s.Headers = e.headers("headers")
	s.OAuth = e.readOAuth()
	if d, ok := e.bool("disabled"); ok {
		s.Disabled = d
	}
	if en, ok := e.bool("enabled"); ok && !en {
		s.Disabled = true
	}
	s.Timeout = e.timeout("timeout")
	s.AllowedTools = e.firstStrings("allowedTools", "includeTools", "enabledTools")
	s.BlockedTools = e.firstStrings("blockedTools", "excludeTools", "disabledTools")
	if iso, ok := e.str("isolation"); ok {
		switch iso {
		case "shared", "session":
			s.Isolation = iso
		default:
			e.fail("isolation", fmt.Errorf(`must be "shared" or "session", not %q`, iso))
		}
	}

	switch {
	case hasType:
		t, err := parseTransport(typ)
		if err != nil {
			e.fail("type", err)
		}
		s.Transport = t
	case urlKey == "httpUrl":
		s.Transport = HTTP
	case s.Command != "" && s.URL != "":
		e.fail("", errors.New(`has both "command" and a URL: set "type" to say which to use`))
	case s.Command != "":
		s.Transport = Stdio
	case s.URL != "" && (strings.HasPrefix(s.URL, "ws://") || strings.HasPrefix(s.URL, "wss://")):
		s.Transport = WebSocket
	case s.URL != "":
		s.Transport = HTTP
	default:
		e.fail("", errors.New(`needs a "command" (stdio) or a "url" (http, sse)`))
	}
	if urlKey == "" {
		urlKey = "url"
	}
	e.urlKey = urlKey
}

// check validates what the transport needs.
func (e *entry) check(s *Server) {
	switch s.Transport {
	case Stdio:
		if s.Command == "" {
			e.fail("command", errors.New(`a stdio server needs a "command"`))
		}
		e.checkExec(s)
	case HTTP, SSE:
		if s.URL == "" {
			e.fail("url", fmt.Errorf(`a %s server needs a "url"`, s.Transport))
			return
		}
		u, err := url.Parse(s.URL)
		if err != nil {
			e.fail(e.urlKey, err)
		} else if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			e.fail(e.urlKey, fmt.Errorf("%q is not an http or https URL", s.URL))
		}
	case WebSocket:
		u, err := url.Parse(s.URL)
		if err != nil {
			e.fail(e.urlKey, err)
		} else if u.Scheme != "ws" && u.Scheme != "wss" || u.Host == "" {
			e.fail(e.urlKey, fmt.Errorf("%q is not a ws or wss URL", s.URL))
		}
	}
}

// checkExec refuses what the system cannot pass to a program, which
// would otherwise fail only when the server starts, and look like a
// server that is unreachable: a NUL byte anywhere, and environment names
// that are empty or hold "=" (which would set another variable than the
// one named) or a line break.
func (e *entry) checkExec(s *Server) {
	if strings.IndexByte(s.Command, 0) >= 0 {
		e.fail("command", errors.New("holds a NUL byte"))
	}
	for i, a := range s.Args {
		if strings.IndexByte(a, 0) >= 0 {
			e.fail(fmt.Sprintf("args[%d]", i), errors.New("holds a NUL byte"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		switch {
		case k == "":
			e.fail("env", errors.New("an environment variable's name is empty"))
		case strings.ContainsAny(k, "=\x00\r\n"):
			e.fail("env", fmt.Errorf("%q is not a valid environment variable name (no \"=\", NUL or line break)", k))
		case strings.IndexByte(s.Env[k], 0) >= 0:
			e.fail("env."+k, errors.New("holds a NUL byte"))
		}
	}
}

// parseTransport maps the type values in use to a Transport.
func parseTransport(t string) (Transport, error) {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(t))
	switch n {
	case "stdio", "local", "command":
		return Stdio, nil
	case "http", "streamablehttp", "streamable", "remote", "https":
		return HTTP, nil
	case "sse":
		return SSE, nil
	case "ws", "websocket":
		return WebSocket, nil
	}
	return "", fmt.Errorf("unknown transport %q (stdio, http, streamable-http, sse, websocket)", t)
}

// unwrapCmd drops a Windows "cmd /c" wrapper, which configurations shared
// between systems carry, so that the entry runs here too.
func unwrapCmd(cmd string, args []string) (string, []string) {
	base := strings.ToLower(cmd)
	if (base == "cmd" || base == "cmd.exe") && len(args) >= 2 && strings.EqualFold(args[0], "/c") {
		return args[1], args[2:]
	}
	return cmd, args
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// dir resolves a working directory: ~ is the home folder, a relative
// path is relative to the file's folder.
func (e *entry) dir(d string) string {
	if d == "~" || strings.HasPrefix(d, "~/") {
		d = filepath.Join(e.p.vars.Home, d[1:])
	}
	if d != "" && !filepath.IsAbs(d) {
		d = filepath.Join(e.p.dir, d)
	}
	return d
}

func kindName(raw jsontext.Value) string {
	switch raw.Kind() {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "invalid JSON"
}

// expand interpolates a string read at key.
func (e *entry) expand(key, s string) string {
	v, err := e.p.vars.Expand(s)
	if err != nil {
		e.fail(key, err)
		return s
	}
	return v
}

// str reads a string member; null counts as absent.
func (e *entry) str(key string) (string, bool) {
	raw, ok := e.m[key]
	if !ok || raw.Kind() == 'n' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		e.fail(key, fmt.Errorf("must be a string, not %s", kindName(raw)))
		return "", false
	}
	return e.expand(key, s), true
}

func (e *entry) firstStr(keys ...string) (string, bool) {
	for _, k := range keys {
		if s, ok := e.str(k); ok {
			return s, true
		}
	}
	return "", false
}

// scalar reads a string, number or boolean as text (numbers and booleans
// appear in args and env).
func (e *entry) scalar(key string, raw jsontext.Value) (string, bool) {
	switch raw.Kind() {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			e.fail(key, err)
			return "", false
		}
		return e.expand(key, s), true
	case '0', 't', 'f':
		return string(raw), true
	}
	e.fail(key, fmt.Errorf("must be a string, not %s", kindName(raw)))
	return "", false
}

// strings reads an array of strings.
func (e *entry) strings(key string) []string {
	raw, ok := e.m[key]
	if !ok || raw.Kind() == 'n' {
		return nil
	}
	if raw.Kind() != '[' {
		e.fail(key, fmt.Errorf("must be an array of strings, not %s", kindName(raw)))
		return nil
	}
	// Item by item, as slices of raw: an array of many small items costs
	// the strings it holds, not a value of each besides.
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw))
	var out []string
	dec.ReadToken()
	for i := 0; dec.PeekKind() != ']'; i++ {
		if i == MaxItems {
			e.fail(key, fmt.Errorf("more than %d items", MaxItems))
			return out
		}
		it, err := dec.ReadValue()
		if err != nil {
			e.fail(key, err)
			return out
		}
		if s, ok := e.scalar(key+"["+strconv.Itoa(i)+"]", it); ok {
			out = append(out, s)
		}
	}
	return out
}

func (e *entry) firstStrings(keys ...string) []string {
	for _, k := range keys {
		if _, ok := e.m[k]; ok {
			return e.strings(k)
		}
	}
	return nil
}

// stringMap reads an object of strings (env).
func (e *entry) stringMap(key string) map[string]string {
	raw, ok := e.m[key]
	if !ok || raw.Kind() == 'n' {
		return nil
	}
	ms, err := members(raw, MaxItems)
	if errors.Is(err, errTooMany) {
		e.fail(key, fmt.Errorf("more than %d items", MaxItems))
		return nil
	}
	if err != nil {
		e.fail(key, fmt.Errorf("must be an object of strings, not %s", kindName(raw)))
		return nil
	}
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		if m.value.Kind() == 'n' {
			continue
		}
		if s, ok := e.scalar(key+"."+m.name, m.value); ok {
			out[m.name] = s
		}
	}
	return out
}

// headers reads HTTP headers: an object, or "Name: value" lines (an
// array of them, or one string).
func (e *entry) headers(key string) map[string]string {
	raw, ok := e.m[key]
	if !ok || raw.Kind() == 'n' {
		return nil
	}
	var lines []string
	switch raw.Kind() {
	case '{':
		h := e.stringMap(key)
		for _, k := range slices.Sorted(maps.Keys(h)) {
			if !validHeaderName(k) {
				e.fail(key+"."+k, fmt.Errorf("%q is not a valid header name", k))
			} else if strings.ContainsAny(h[k], "\x00\r\n") {
				e.fail(key+"."+k, errors.New("the value holds a line break or a NUL byte"))
			}
		}
		return h
	case '[':
		lines = e.strings(key)
	case '"':
		s, _ := e.str(key)
		lines = strings.Split(s, "\n")
	default:
		e.fail(key, fmt.Errorf(`must be an object or "Name: value" lines, not %s`, kindName(raw)))
		return nil
	}
	out := map[string]string{}
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if !ok || !validHeaderName(k) {
			e.fail(fmt.Sprintf("%s[%d]", key, i), fmt.Errorf("%q is not a \"Name: value\" header", l))
			continue
		}
		out[k] = strings.TrimSpace(v)
	}
	return out
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func (e *entry) bool(key string) (bool, bool) {
	raw, ok := e.m[key]
	if !ok || raw.Kind() == 'n' {
		return false, false
	}
	switch raw.Kind() {
	case 't':
		return true, true
	case 'f':
		return false, true
	case '"':
		s, _ := e.str(key)
		if b, err := strconv.ParseBool(s); err == nil {
			return b, true
		}
	}
	e.fail(key, fmt.Errorf("must be true or false, not %s", kindName(raw)))
	return false, false
}

// timeout reads a timeout: a Go duration string ("30s", "2m"), or a
// number, which is milliseconds when 1000 or more (Gemini CLI, Claude
// Code) and seconds below (Cline).
func (e *entry) timeout(key string) time.Duration {
	raw, ok := e.m[key]
	if !ok || raw.Kind() == 'n' {
		return 0
	}
	switch raw.Kind() {
	case '0':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || f > 1e12 {
			e.fail(key, fmt.Errorf("%s is not a valid timeout", raw))
			return 0
		}
		if f >= 1000 {
			return time.Duration(f * float64(time.Millisecond))
		}
		return time.Duration(f * float64(time.Second))
	case '"':
		s, _ := e.str(key)
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			e.fail(key, fmt.Errorf("%q is not a duration such as \"30s\"", s))
			return 0
		}
		return d
	}
	e.fail(key, fmt.Errorf("must be a number or a duration, not %s", kindName(raw)))
	return 0
}

// Keys returns the keys [Parse] understands in a server entry, sorted, as
// a fresh slice the caller may keep or change.
func Keys() []string {
	return slices.Sorted(slices.Values([]string{
		"type", "transport", "command", "args", "env", "environment", "cwd", "workingDirectory",
		"url", "serverUrl", "httpUrl", "headers", "disabled", "enabled", "timeout",
		"allowedTools", "includeTools", "enabledTools", "blockedTools", "excludeTools", "disabledTools",
	}))
}
