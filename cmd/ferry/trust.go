package main

import (
	"bufio"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferrymcp/ferry/config"
)

// A project configuration (./.mcp.json, ./mcp-servers.json,
// ./.cursor/mcp.json, ./.vscode/mcp.json) comes with the folder: a
// cloned repository can put any command there. Its servers start only
// in a folder the user has trusted once, as editors ask (trustedFile
// keeps the list), or with --trust-folder for scripts. A file given with
// --config, and the user-wide files, are the user's own.

// trustedFile is the list of trusted folders, one absolute path a line:
// ferry/trusted-folders in the user's configuration directory
// ($XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support
// on macOS).
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

// folderTrusted reports whether dir is in the trusted list.
func folderTrusted(dir string) bool {
	path, err := trustedFile()
	if err != nil {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dir = canonicalDir(dir)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == dir {
			return true
		}
	}
	return false
}

// trustFolder adds dir to the trusted list.
func trustFolder(dir string) error {
	path, err := trustedFile()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, canonicalDir(dir))
	return errors.Join(err, f.Close())
}

// trustProject decides whether the project files found in dir may be
// read: the folder is trusted, --trust-folder is given, or the user
// says so now at a terminal (and the folder is remembered). Otherwise
// they are skipped, and a line on stderr says how to use them.
func (o *cli) trustProject(dir string, files []string) bool {
	if o.trustFolder || folderTrusted(dir) {
		return true
	}
	rel := make([]string, len(files))
	for i, f := range files {
		rel[i] = "./" + filepath.ToSlash(relTo(dir, f))
	}
	if o.term != nil && o.term.ask {
		o.logf("This folder (%s) has its own MCP configuration: %s.", dir, strings.Join(rel, ", "))
		for _, f := range files {
			for _, line := range projectEntries(f) {
				o.logf("  %s", line)
			}
		}
		if o.term.confirm("Trust this folder and start the servers it configures? [y/N] ") {
			if err := trustFolder(dir); err != nil {
				o.logf("ferry: could not remember the folder: %v", err)
			}
			return true
		}
	}
	o.logf("ferry: skipped %s: this folder is not trusted (answer yes at a terminal once, or pass --trust-folder)", strings.Join(rel, ", "))
	return false
}

// projectEntries lists what a project file would start, for the
// question: each server's name and program (or URL host), without the
// arguments, headers or environment, which may hold secrets once
// interpolated.
func projectEntries(path string) []string {
	f, err := config.Load(path, config.DefaultOptions())
	if err != nil {
		return []string{fmt.Sprintf("(%v)", err)}
	}
	var out []string
	for _, s := range f.Servers {
		what := s.Command
		if s.URL != "" {
			what = string(s.Transport) + " server at "
			if u, err := url.Parse(s.URL); err == nil {
				what += u.Host
			}
		}
		out = append(out, fmt.Sprintf("%s: %s", s.Name, what))
	}
	return out
}

func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
