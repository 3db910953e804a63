// Command modproxy lays out the modules of this repository, as committed
// at a revision, as a file-system Go module proxy (GOPROXY=file://DIR): a
// zip, a go.mod and an info file per module, at the version the modules
// are released at together. scripts/install-check.sh installs the ferry
// command and builds programs on the library from it, as a user would
// from a public proxy, to prove that the published modules need nothing
// of this checkout (no replace directive, no go.work).
//
// Usage:
//
//	go run ./interop/modproxy -repo . -rev HEAD -version v0.1.0 -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// published are the modules a user fetches: their paths and folders.
var published = []struct{ path, dir string }{
	{"github.com/ferrymcp/ferry", ""},
	{"github.com/ferrymcp/ferry/agent", "agent"},
	{"github.com/ferrymcp/ferry/cmd/ferry", "cmd/ferry"},
}

func main() {
	repo := flag.String("repo", ".", "the repository's root")
	rev := flag.String("rev", "HEAD", "the revision to serve")
	version := flag.String("version", "", "the version the modules are served at")
	out := flag.String("out", "", "the proxy's folder")
	flag.Parse()
	if *version == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "modproxy: -version and -out are required")
		os.Exit(2)
	}
	tree, err := export(*repo, *rev)
	if err != nil {
		fmt.Fprintf(os.Stderr, "modproxy: %v\n", err)
		os.Exit(1)
	}
	defer os.RemoveAll(tree)
	for _, m := range published {
		if err := lay(tree, *out, module.Version{Path: m.path, Version: *version}, m.dir); err != nil {
			fmt.Fprintf(os.Stderr, "modproxy: %s: %v\n", m.path, err)
			os.Exit(1)
		}
	}
}

// export writes the files committed at rev into a new folder: what the
// modules hold is what was committed, never what is lying around.
func export(repo, rev string) (string, error) {
	tree, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return "", err
	}
	archive := exec.Command("git", "-C", repo, "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", tree)
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return "", err
	}
	untar.Stderr, archive.Stderr = os.Stderr, os.Stderr
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %w", rev, err)
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("unpacking %s: %w", rev, err)
	}
	return tree, nil
}

// lay writes one module version's files, from the exported tree, into
// the proxy at out. CreateFromDir leaves out the folders of nested
// modules, as the go command does.
func lay(tree, out string, m module.Version, subdir string) error {
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	src := filepath.Join(tree, filepath.FromSlash(subdir))
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC()})
	if err != nil {
		return err
	}
	base := filepath.Join(dir, m.Version)
	for name, data := range map[string][]byte{base + ".mod": gomod, base + ".info": info, filepath.Join(dir, "list"): []byte(m.Version + "\n")} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(base + ".zip")
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(f, m, src); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
