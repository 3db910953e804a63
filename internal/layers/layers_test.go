// Package layers_test draws ferry's layers from `go list` and holds
// DESIGN.md's diagram and the packages' imports to them: the diagram is
// what the import graph is, and a package links only what its layer
// needs (issue 30, item 4: the diagram was not the import graph, host
// linked a WebSocket library, a Streamable HTTP client linked server).
package layers_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ferrymcp/ferry"

// The roots of the observability libraries.
const (
	prom = "github.com/prometheus"
	otel = "go.opentelemetry.io"
)

// library is the root module's packages that programs import, each with
// the module's packages it links (its transitive, non-test deps), and
// all of its deps.
type library map[string]*listed

type listed struct {
	ferry []string // the library packages it links, relative to the module
	deps  []string // every package it links, standard library included
}

// list runs go list over the root module: every package outside
// internal/ that is not a command.
func list(t *testing.T) library {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}} {{.Name}} {{join .Deps " "}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	lib := library{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] == "main" || strings.Contains(f[0], "/internal") {
			continue
		}
		lib[rel(f[0])] = &listed{deps: f[2:]}
	}
	for _, p := range lib {
		for _, d := range p.deps {
			if _, ok := lib[rel(d)]; ok && strings.HasPrefix(d, module+"/") {
				p.ferry = append(p.ferry, rel(d))
			}
		}
	}
	return lib
}

func rel(path string) string { return strings.TrimPrefix(path, module+"/") }

// layers puts each package one layer above the highest it links: a
// package links only what is below it.
func (lib library) layers() map[string]int {
	layer := map[string]int{}
	var of func(p string) int
	of = func(p string) int {
		if n, ok := layer[p]; ok {
			return n
		}
		n := 0
		for _, d := range lib[p].ferry {
			n = max(n, of(d)+1)
		}
		layer[p] = n
		return n
	}
	for p := range lib {
		of(p)
	}
	return layer
}

// diagram is the text DESIGN.md shows: the layers top down, the
// packages of each in order.
func (lib library) diagram() string {
	byLayer := map[int][]string{}
	top := 0
	for p, n := range lib.layers() {
		byLayer[n] = append(byLayer[n], p)
		top = max(top, n)
	}
	var b strings.Builder
	for n := top; n >= 0; n-- {
		slices.Sort(byLayer[n])
		fmt.Fprintf(&b, "%d  %s\n", n, strings.Join(byLayer[n], "  "))
	}
	return b.String()
}

// TestDesignDiagram: DESIGN.md's layer diagram is the one go list draws.
func TestDesignDiagram(t *testing.T) {
	design, err := os.ReadFile(filepath.Join("..", "..", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- layers: drawn by internal/layers; go test ./internal/layers -->\n```\n", "```\n"
	_, rest, ok := strings.Cut(string(design), begin)
	if !ok {
		t.Fatalf("DESIGN.md has no %q", begin)
	}
	shown, _, _ := strings.Cut(rest, end)
	if want := list(t).diagram(); shown != want {
		t.Errorf("DESIGN.md's layer diagram is not the import graph; go list draws:\n%s", want)
	}
}

// TestLinks: what a program that imports a package links, for the
// packages whose users must not pay for the others' dependencies.
func TestLinks(t *testing.T) {
	lib := list(t)
	for _, tc := range []struct {
		pkg     string
		mustNot []string // import path prefixes
		why     string
	}{
		{"host", []string{"github.com/coder/websocket", module + "/websocket"}, "the WebSocket transport is given by the program that wants it (Options.Dialers)"},
		{"client", []string{module + "/server", module + "/jsonschema"}, "a client links no server"},
		{"transport/streamable", []string{module + "/server", module + "/jsonschema"}, "a client links no server: the handler is package streamablehandler"},
		{"transport/sse", []string{module + "/server", module + "/jsonschema"}, "a client links no server: the handler is package ssehandler"},
		{"observe/logs", []string{prom, otel}, "request logs alone link neither Prometheus nor OpenTelemetry"},
		{"observe/metrics", []string{otel}, "metrics link no OpenTelemetry"},
		{"observe/tracing", []string{prom}, "traces link no Prometheus"},
	} {
		p, ok := lib[tc.pkg]
		if !ok {
			t.Errorf("go list has no package %s", tc.pkg)
			continue
		}
		for _, d := range p.deps {
			for _, bad := range tc.mustNot {
				if d == bad || strings.HasPrefix(d, bad+"/") {
					t.Errorf("%s links %s: %s", tc.pkg, d, tc.why)
				}
			}
		}
	}
}
