package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Vars resolve the variables of ${...} references.
type Vars struct {
	// Lookup finds an environment variable (os.LookupEnv by default).
	Lookup func(name string) (string, bool)
	// Home is ${userHome}.
	Home string
	// Workspace is ${workspaceFolder}: the project folder of a project
	// file (the folder holding .vscode/, .cursor/ or .mcp.json).
	Workspace string
}

// Expand replaces the references in s:
//
//	${VAR}            the environment variable VAR; an error if unset
//	${env:VAR}        the same, as VS Code writes it
//	${VAR:-default}   VAR when set and not empty, else default (itself expanded)
//	${VAR-default}    VAR when set, else default
//	${userHome}, ${workspaceFolder}, ${workspaceFolderBasename}, ${/}
//
// Text without "${" is returned as it is. A reference to a variable that is
// not set fails with a *[MissingVarError]. Defaults may nest up to
// [MaxNesting] references deep: the expansion then takes time linear in
// the length of s (each level scans its own text once).
func (v *Vars) Expand(s string) (string, error) {
	return v.expand(s, 0)
}

// MaxNesting bounds how deep references may nest in defaults
// (${A:-${B:-...}}): no configuration needs more, and without a bound a
// line of nested defaults costs time quadratic in its length.
const MaxNesting = 16

func (v *Vars) expand(s string, depth int) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if depth >= MaxNesting {
		return "", fmt.Errorf("references nested more than %d deep", MaxNesting)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end, inner := closingBrace(s, i+2)
		if end < 0 {
			return "", fmt.Errorf("unterminated reference %q", shorten(s[i:]))
		}
		if depth+1+inner > MaxNesting {
			// Found in this one scan, before any level below is looked at.
			return "", fmt.Errorf("references nested more than %d deep", MaxNesting)
		}
		val, err := v.resolve(s[i+2:end], depth)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		s = s[end+1:]
	}
}

// shorten cuts a piece of a configuration for an error message.
func shorten(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// closingBrace returns the index of the "}" that closes a reference whose
// body starts at from, skipping nested references, or -1; and how deep
// the references inside it nest.
func closingBrace(s string, from int) (end, inner int) {
	depth := 0
	for j := from; j < len(s); j++ {
		switch {
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			depth++
			inner = max(inner, depth)
			j++
		case s[j] == '}':
			if depth == 0 {
				return j, inner
			}
			depth--
		}
	}
	return -1, inner
}

func (v *Vars) resolve(ref string, depth int) (string, error) {
	name, def, hasDef, emptyIsUnset := ref, "", false, false
	if k := strings.Index(ref, ":-"); k >= 0 {
		name, def, hasDef, emptyIsUnset = ref[:k], ref[k+2:], true, true
	} else if k := strings.IndexByte(ref, '-'); k > 0 && isName(ref[:k]) {
		name, def, hasDef = ref[:k], ref[k+1:], true
	}
	if env, ok := strings.CutPrefix(name, "env:"); ok {
		name = env
	} else {
		switch name {
		case "userHome":
			return v.Home, nil
		case "workspaceFolder":
			return v.Workspace, nil
		case "workspaceFolderBasename":
			return filepath.Base(v.Workspace), nil
		case "/", "pathSeparator":
			return string(filepath.Separator), nil
		}
		if strings.HasPrefix(name, "input:") {
			if hasDef {
				return v.expand(def, depth+1)
			}
			return "", &MissingVarError{Name: name}
		}
	}
	if !isName(name) {
		return "", fmt.Errorf("invalid reference ${%s}", shorten(ref))
	}
	lookup := v.Lookup
	if lookup == nil {
		return "", &MissingVarError{Name: name}
	}
	val, ok := lookup(name)
	if ok && (val != "" || !emptyIsUnset) {
		return val, nil
	}
	if hasDef {
		return v.expand(def, depth+1)
	}
	return "", &MissingVarError{Name: name}
}

// isName reports whether s is an environment variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

var errEmpty = errors.New("must not be empty")
