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

// Bounds of what one file may hold: the memory [Parse] takes grows with
// the servers it reads, and these keep that a small multiple of what a
// real configuration holds, whatever the file.
const (
	// MaxServers bounds the servers of one file.
	MaxServers = 1024
	// MaxEntryBytes bounds one server's entry, as written in the file.
	MaxEntryBytes = 1 << 20
	// MaxItems bounds the items of an array or object in an entry (args,
	// env, headers, tool lists): a system refuses to start a program with
	// more than a few megabytes of arguments and environment anyway.
	MaxItems = 4096
)

// Parse reads a configuration file's content. The error is about the file
// as a whole (not JSON, no server object); a problem with one entry is in
// that entry's Err, so that the other entries can still be used.
//
// The file is read in one pass that copies nothing but the entries of
// servers: what else it holds (the history of ~/.claude.json, the
// projects of other folders) is only scanned.
func Parse(path string, data []byte, opts *Options) (*File, error) {
	if opts == nil {
		opts = &Options{}
	}
	if len(data) > maxFileSize {
		return nil, &Error{File: path, Err: fmt.Errorf("larger than %d bytes", maxFileSize)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM
	clean := stripJSONC(data)
	p := &parser{file: path, vars: opts.Vars, dir: filepath.Dir(path), project: opts.Project}
	if p.vars.Workspace == "" {
		p.vars.Workspace = workspaceOf(path)
	}
	p.f = &File{Path: path}
	// Names are checked for duplicates where it matters (servers, and
	// within an entry): the decoder's own check would keep every name of
	// the file in memory.
	dec := jsontext.NewDecoder(bytes.NewBuffer(clean), jsontext.AllowDuplicateNames(true))
	err := eachMember(dec, p.top)
	switch {
	case errors.Is(err, errTooMany):
		err = nil // the file is refused: p.fileErr says why
	case err == nil:
		if _, terr := dec.ReadToken(); terr != io.EOF {
			err = &posError{off: dec.InputOffset(), err: errors.New("unexpected data after the top-level object")}
		}
	}
	switch {
	case err != nil:
		return nil, syntaxError(path, clean, err)
	case p.fileErr != nil:
		return nil, &Error{File: path, Err: p.fileErr}
	case !p.found:
		return nil, &Error{File: path, Err: ErrNoServers}
	}
	return p.f, nil
}

// top reads a member of the file's top-level object.
func (p *parser) top(dec *jsontext.Decoder, name string) error {
	switch name {
	case "mcpServers", "servers":
		if dec.PeekKind() != '{' {
			if p.fileErr == nil {
				p.fileErr = fmt.Errorf("%q must be an object of servers", name)
			}
			return dec.SkipValue()
		}
		if !p.found {
			p.f.Format = name
		}
		p.found = true
		return eachMember(dec, p.entry)
	case "agent":
		// ferry's agent keeps its settings next to the servers.
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if len(raw) > MaxEntryBytes {
			return &posError{off: dec.InputOffset(), err: fmt.Errorf("the agent settings' %d bytes exceed the limit of %d", len(raw), MaxEntryBytes)}
		}
		p.f.Agent = bytes.Clone(raw)
		return nil
	case "identity", "access", "audit", "views", "limits":
		return p.section(dec, name)
	case "projects":
		// Claude Code's ~/.claude.json keeps the servers of each project
		// under its path.
		if p.project == "" || dec.PeekKind() != '{' {
			return dec.SkipValue()
		}
		return eachMember(dec, func(dec *jsontext.Decoder, name string) error {
			if name != p.project || dec.PeekKind() != '{' {
				return dec.SkipValue()
			}
			return eachMember(dec, func(dec *jsontext.Decoder, name string) error {
				if name != "mcpServers" || dec.PeekKind() != '{' {
					return dec.SkipValue()
				}
				p.found = true
				if p.f.Format == "" {
					p.f.Format = "mcpServers"
				}
				return eachMember(dec, p.entry)
			})
		})
	}
	return dec.SkipValue()
}

// entry reads one server's entry.
func (p *parser) entry(dec *jsontext.Decoder, name string) error {
	if len(p.f.Servers) >= MaxServers {
		p.fileErr = fmt.Errorf("more than %d servers", MaxServers)
		return errTooMany
	}
	if p.names == nil {
		p.names = map[string]bool{}
	}
	off := dec.InputOffset()
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if p.names[name] {
		return &posError{off: off, err: fmt.Errorf("duplicate object member name %q", name)}
	}
	p.names[name] = true
	if len(raw) > MaxEntryBytes {
		p.f.Servers = append(p.f.Servers, &Server{Name: name, Source: p.file, Err: &Error{File: p.file, Server: name,
			Err: fmt.Errorf("the entry's %d bytes exceed the limit of %d", len(raw), MaxEntryBytes)}})
		return nil
	}
	p.f.Servers = append(p.f.Servers, p.server(name, raw))
	return nil
}

// eachMember calls fn for each member of the object that comes next,
// which must read or skip the member's value; errNotObject when what
// comes next is not an object.
func eachMember(dec *jsontext.Decoder, fn func(dec *jsontext.Decoder, name string) error) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return offsetError(err, dec)
	}
	if tok.Kind() != '{' {
		return errNotObject
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return offsetError(err, dec)
		}
		if err := fn(dec, tok.String()); err != nil {
			return offsetError(err, dec)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return offsetError(err, dec)
	}
	return nil
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
	name  string
	value jsontext.Value // a slice of the object it was read from
}

var (
	errNotObject = errors.New("not an object")
	errTooMany   = errors.New("too many members") // ends the reading of an object refused
)

// members returns the members of a JSON object in their order, their
// values slices of raw; errTooMany when there are more than max.
func members(raw []byte, max int) ([]member, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw))
	var out []member
	err := eachMember(dec, func(dec *jsontext.Decoder, name string) error {
		if len(out) == max {
			return errTooMany
		}
		v, err := dec.ReadValue()
		if err == nil {
			out = append(out, member{name: name, value: v})
		}
		return err
	})
	return out, err
}

// posError is a syntax error at an offset of the file.
type posError struct {
	off int64
	err error
}

func (e *posError) Error() string { return e.err.Error() }

func offsetError(err error, dec *jsontext.Decoder) error {
	var pe *posError
	if errors.As(err, &pe) || errors.Is(err, errNotObject) || errors.Is(err, errTooMany) {
		return err
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &posError{off: dec.InputOffset(), err: errors.New("unexpected end of JSON")}
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return &posError{off: se.ByteOffset, err: se.Err}
	}
	return &posError{off: dec.InputOffset(), err: err}
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
