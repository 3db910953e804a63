package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Options tell [Parse] and [Load] how to resolve what a file leaves
// open.
type Options struct {
	// Vars resolve ${...} references. Vars.Workspace, when empty, is the
	// file's project folder (the parent of a .vscode or .cursor folder,
	// else the file's folder).
	Vars Vars
	// Project selects the entry of the "projects" object of Claude
	// Code's ~/.claude.json whose servers are read (an absolute path,
	// normally the working directory). Empty reads none.
	Project string
}

// DefaultOptions resolves variables from the environment, with the
// user's home folder, and reads the projects entry of the working
// directory.
func DefaultOptions() *Options {
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	return &Options{Vars: Vars{Lookup: os.LookupEnv, Home: home}, Project: wd}
}

// Load reads and parses the file at path.
func Load(path string, opts *Options) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	return Parse(path, data, opts)
}

// maxFileSize bounds a configuration file (~/.claude.json grows with the
// history it keeps, but not this far).
const maxFileSize = 64 << 20

// Parse reads a configuration file's content. The error is about the file
// as a whole (not JSON, no server object); a problem with one entry is in
// that entry's Err, so that the other entries can still be used.
func Parse(path string, data []byte, opts *Options) (*File, error) {
	if opts == nil {
		opts = &Options{}
	}
	fail := func(err error) (*File, error) { return nil, &Error{File: path, Err: err} }
	if len(data) > maxFileSize {
		return fail(fmt.Errorf("larger than %d bytes", maxFileSize))
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM
	clean := stripJSONC(data)
	top, err := members(clean, 0)
	if err != nil {
		return nil, syntaxError(path, clean, err)
	}
	p := &parser{file: path, vars: opts.Vars, dir: filepath.Dir(path)}
	if p.vars.Workspace == "" {
		p.vars.Workspace = workspaceOf(path)
	}
	f := &File{Path: path}
	found := false
	for _, m := range top {
		switch m.name {
		case "mcpServers", "servers":
			servers, err := members(m.value, m.offset)
			if err != nil {
				if errors.Is(err, errNotObject) {
					return fail(fmt.Errorf("%q must be an object of servers", m.name))
				}
				return nil, syntaxError(path, clean, err)
			}
			if !found {
				f.Format = m.name
			}
			found = true
			for _, s := range servers {
				f.Servers = append(f.Servers, p.server(s.name, s.value))
			}
		case "projects":
			// Claude Code's ~/.claude.json keeps the servers of each
			// project under its path.
			if opts.Project == "" {
				continue
			}
			projects, err := members(m.value, m.offset)
			if err != nil {
				continue
			}
			for _, pr := range projects {
				if pr.name != opts.Project {
					continue
				}
				inner, err := members(pr.value, pr.offset)
				if err != nil {
					continue
				}
				for _, in := range inner {
					if in.name != "mcpServers" {
						continue
					}
					servers, err := members(in.value, in.offset)
					if err != nil {
						continue
					}
					found = true
					if f.Format == "" {
						f.Format = "mcpServers"
					}
					for _, s := range servers {
						f.Servers = append(f.Servers, p.server(s.name, s.value))
					}
				}
			}
		}
	}
	if !found {
		return fail(ErrNoServers)
	}
	return f, nil
}

// workspaceOf is the project folder of a configuration file.
func workspaceOf(path string) string {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	switch filepath.Base(dir) {
	case ".vscode", ".cursor", ".windsurf", ".roo", ".kiro", ".gemini":
		return filepath.Dir(dir)
	}
	return dir
}

type member struct {
	name   string
	value  jsontext.Value
	offset int64 // of value in the whole file
}

var errNotObject = errors.New("not an object")

// members returns the members of a JSON object in their order. base is
// the offset of raw in the file, for error positions.
func members(raw []byte, base int64) ([]member, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, offsetError(err, base, dec)
	}
	if tok.Kind() != '{' {
		return nil, errNotObject
	}
	var out []member
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, offsetError(err, base, dec)
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, offsetError(err, base, dec)
		}
		off := dec.InputOffset() - int64(len(v))
		out = append(out, member{name: name, value: bytes.Clone(v), offset: base + off})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, offsetError(err, base, dec)
	}
	if base == 0 {
		if _, err := dec.ReadToken(); err != io.EOF {
			return nil, &posError{off: dec.InputOffset(), err: errors.New("unexpected data after the top-level object")}
		}
	}
	return out, nil
}

// posError is a syntax error at an offset of the file.
type posError struct {
	off int64
	err error
}

func (e *posError) Error() string { return e.err.Error() }

func offsetError(err error, base int64, dec *jsontext.Decoder) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &posError{off: base + dec.InputOffset(), err: errors.New("unexpected end of JSON")}
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return &posError{off: base + se.ByteOffset, err: se.Err}
	}
	return &posError{off: base + dec.InputOffset(), err: err}
}

func syntaxError(path string, data []byte, err error) error {
	if errors.Is(err, errNotObject) {
		return &Error{File: path, Err: errors.New("not a JSON object")}
	}
	var pe *posError
	if errors.As(err, &pe) {
		line, col := lineCol(data, pe.off)
		return &Error{File: path, Line: line, Column: col, Err: fmt.Errorf("invalid JSON: %v", pe.err)}
	}
	return &Error{File: path, Err: fmt.Errorf("invalid JSON: %v", err)}
}

// splitCommand splits a command line written as one string ("npx -y
// pkg") into words, honouring single and double quotes and backslashes.
func splitCommand(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, esc := false, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			cur.WriteByte(c)
			esc = false
		case c == '\\' && quote != '\'':
			esc, in = true, true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
