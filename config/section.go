package config

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The gateway's sections are the top-level members of a file that ferry
// serve reads beside its servers: who the callers are ("identity"), what
// they may call ("access"), what is recorded ("audit"), the curated views
// ("views") and the limits ("limits"). The parser keeps each raw in
// [File].Sections; the code that owns it decodes it with [File.Section].
// Section decodes the top-level member name of the file (one of the
// gateway's sections: identity, access, audit, views, limits) into v,
// strictly: a member v does not declare is refused, as a misspelt
// setting must not be silently ignored. It reports false when the file
// has no such member. An error is an [*Error] whose Key is the path of
// the bad field, such as "access.rules[2].allow.roles".
func (f *File) Section(name string, v any) (bool, error) {
	raw, ok := f.Sections[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v, json.RejectUnknownMembers(true)); err != nil {
		return true, sectionError(f.Path, name, err)
	}
	return true, nil
}

// FieldError is a problem with one field of a section, found after it
// decoded (a value out of range, a pattern that does not compile): Path
// is the field's path below the section ("rules[2].tools[0]").
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// SectionError returns err, a problem with section name of the file at
// path, as an [*Error] naming the field: a [*FieldError] or a decoding
// error of the JSON library gives the field's path.
func SectionError(path, name string, err error) error {
	return sectionError(path, name, err)
}

func sectionError(path, name string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &Error{File: path, Key: joinKey(name, fe.Path), Err: fe.Err}
	}
	var se *json.SemanticError
	if errors.As(err, &se) {
		key := joinKey(name, pointerKey(se.JSONPointer))
		why := se.Err
		if why == nil {
			why = errors.New(semanticReason(se))
		}
		return &Error{File: path, Key: key, Err: why}
	}
	var sy *jsontext.SyntacticError
	if errors.As(err, &sy) {
		return &Error{File: path, Key: joinKey(name, pointerKey(sy.JSONPointer)), Err: sy.Err}
	}
	return &Error{File: path, Key: name, Err: err}
}

// semanticReason says what a value of the wrong kind should have been.
func semanticReason(se *json.SemanticError) string {
	if se.GoType != nil && se.JSONKind != 0 {
		return fmt.Sprintf("must be %s, not %s", goKindName(se.GoType.Kind().String()), jsonKindName(se.JSONKind))
	}
	return "invalid value"
}

func goKindName(k string) string {
	switch k {
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

func jsonKindName(k jsontext.Kind) string {
	return kindName(jsontext.Value{byte(k)})
}

// pointerKey writes a JSON pointer (/rules/2/allow) as a path
// (rules[2].allow).
func pointerKey(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func joinKey(name, sub string) string {
	switch {
	case sub == "":
		return name
	case strings.HasPrefix(sub, "["):
		return name + sub
	}
	return name + "." + sub
}

// section keeps one of the gateway's sections of the file, raw.
func (p *parser) section(dec *jsontext.Decoder, name string) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if len(raw) > MaxEntryBytes {
		return &posError{off: dec.InputOffset(), err: fmt.Errorf("the %q settings' %d bytes exceed the limit of %d", name, len(raw), MaxEntryBytes)}
	}
	if p.f.Sections == nil {
		p.f.Sections = map[string]jsontext.Value{}
	}
	p.f.Sections[name] = bytes.Clone(raw)
	return nil
}

// FirstSection decodes section name of the first of files that has it,
// as [Merge] takes the first definition of a server, and returns that
// file; nil when none has it.
func FirstSection(files []*File, name string, v any) (*File, error) {
	for _, f := range files {
		if ok, err := f.Section(name, v); ok {
			return f, err
		}
	}
	return nil, nil
}
