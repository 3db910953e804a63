package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/ferrymcp/ferry/config"
)

// A project configuration (./.mcp.json, ./mcp-servers.json,
// ./.cursor/mcp.json, ./.vscode/mcp.json) comes with the folder: a
// cloned repository can put any command there. Its servers start only
// once the user has trusted that folder with that configuration (at a
// terminal, remembered in trustedFile), or with --trust-folder for
// scripts. The trust is bound to the files' content: a server added or
// changed later (a git pull) asks again. A file given with --config,
// and the user-wide files, are the user's own.

// trustedFile is the list of trusted folders, one a line: the absolute
// path, a tab, and the digest of the folder's project files when they
// were trusted (see configDigest). It is ferry/trusted-folders in the
// user's configuration directory ($XDG_CONFIG_HOME or ~/.config on
// Linux, ~/Library/Application Support on macOS).
func trustedFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "ferry", "trusted-folders"), nil
}

// canonicalDir is dir absolute, with its symbolic links resolved.
func canonicalDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// configDigest is what the trust of a folder is bound to: a SHA-256 of
// its project files' names and contents. A file that cannot be read
// gives a digest no trust matches.
func configDigest(dir string, files []string) string {
	h := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "unreadable"
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(relTo(dir, f)), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// trustLine is dir's line in the trusted list, with the digest of files.
func trustLine(dir string, files []string) string {
	return canonicalDir(dir) + "\t" + configDigest(dir, files)
}

// folderTrusted reports whether dir is in the trusted list with the
// configuration files have now.
func folderTrusted(dir string, files []string) bool {
	path, err := trustedFile()
	if err != nil {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	want := trustLine(dir, files)
	return slices.Contains(strings.Split(string(data), "\n"), want)
}

// trustFolder records dir as trusted with the content files have now,
// in place of what was trusted there before.
func trustFolder(dir string, files []string) error {
	path, err := trustedFile()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	canon := canonicalDir(dir)
	var lines []string
	for _, l := range strings.Split(string(old), "\n") {
		if d, _, _ := strings.Cut(l, "\t"); l != "" && d != canon {
			lines = append(lines, l)
		}
	}
	lines = append(lines, trustLine(dir, files))
	return writeFileAtomic(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// writeFileAtomic replaces path with data through a temporary file, so
// that a reader never sees half a list.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".trusted-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Chmod(perm), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// projectFiles are the project configuration files found in the
// working directory, and that directory.
func projectFiles() (dir string, files []string) {
	env := config.HostEnv()
	for _, l := range config.Discover(env) {
		if l.Project {
			files = append(files, l.Path)
		}
	}
	return env.Dir, files
}

// projectNeedsTrust reports whether reading the configuration again
// would ask the user about this folder's files (they are new or
// changed since trusted): a reload that cannot ask (SIGHUP) leaves it.
func (o *cli) projectNeedsTrust() bool {
	if len(o.configs) > 0 || o.trustFolder {
		return false
	}
	dir, files := projectFiles()
	return len(files) > 0 && !folderTrusted(dir, files)
}

// trustProject decides whether the project files found in dir may be
// read: the folder is trusted with this content, --trust-folder is
// given, or the user says so now at a terminal, shown every server's
// full command line (and the folder and content are remembered).
// Otherwise they are skipped, and a line on stderr says how to use them.
func (o *cli) trustProject(dir string, files []string) bool {
	if o.trustFolder || folderTrusted(dir, files) {
		return true
	}
	rel := make([]string, len(files))
	for i, f := range files {
		rel[i] = "./" + filepath.ToSlash(relTo(dir, f))
	}
	if o.term != nil && o.term.ask {
		o.logf("This folder (%s) has its own MCP configuration, new or changed since you last trusted it: %s.", dir, strings.Join(rel, ", "))
		for _, f := range files {
			for _, line := range projectEntries(f) {
				o.logf("  %s", line)
			}
		}
		if o.term.confirm("Trust this folder with this configuration and start the servers it configures? [y/N] ") {
			if err := trustFolder(dir, files); err != nil {
				o.logf("ferry: could not remember the folder: %v", err)
			}
			return true
		}
	}
	o.logf("ferry: skipped %s: this folder is not trusted with this configuration (answer yes at a terminal, or pass --trust-folder)", strings.Join(rel, ", "))
	return false
}

// projectEntries lists what a project file would start, for the
// question: each server's name and full command line (or URL), as
// written: references to variables (${TOKEN}) are shown, not their
// values, which may be secrets. Headers and the environment are not
// shown for the same reason; their names are.
func projectEntries(path string) []string {
	opts := config.DefaultOptions()
	opts.Vars.Lookup = func(name string) (string, bool) { return "${" + name + "}", true }
	f, err := config.Load(path, opts)
	if err != nil {
		return []string{fmt.Sprintf("(%v)", err)}
	}
	var out []string
	for _, s := range f.Servers {
		what := shellQuote(append([]string{s.Command}, s.Args...))
		if s.URL != "" {
			what = string(s.Transport) + " server at " + s.URL
		}
		if keys := slices.Sorted(maps.Keys(s.Env)); len(keys) > 0 {
			what += " (environment: " + strings.Join(keys, ", ") + ")"
		}
		if keys := slices.Sorted(maps.Keys(s.Headers)); len(keys) > 0 {
			what += " (headers: " + strings.Join(keys, ", ") + ")"
		}
		out = append(out, fmt.Sprintf("%s: %s", s.Name, safe(what)))
	}
	return out
}

// shellQuote writes argv as a shell would read it back.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = a
		if a == "" || strings.ContainsFunc(a, needsQuote) {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// needsQuote reports whether a shell would read r as more than itself.
func needsQuote(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_./:=@%+,", r)
}

func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
