package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// nodePeer returns the command line that runs the npm package pkg's
// script (under interop/node/node_modules, which scripts/test.sh
// installs) with Node: $FERRY_NODE, the Node 22 of the matching
// node-OS-ARCH package, or the system's node.
func nodePeer(t *testing.T, pkg, script string, args ...string) []string {
	t.Helper()
	modules, _ := filepath.Abs("../../interop/node/node_modules")
	path := filepath.Join(modules, pkg, script)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not installed (scripts/test.sh installs it): %v", pkg, err)
	}
	node := os.Getenv("FERRY_NODE")
	if node == "" {
		arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
		candidate := filepath.Join(modules, "node-"+runtime.GOOS+"-"+arch, "bin", "node")
		if _, err := os.Stat(candidate); err == nil {
			node = candidate
		} else if p, err := exec.LookPath("node"); err == nil {
			node = p
		} else {
			t.Skip("no Node")
		}
	}
	return append([]string{node, path}, args...)
}

// serverEverything is server-everything on stdio.
func serverEverything(t *testing.T) []string {
	return nodePeer(t, "@modelcontextprotocol/server-everything", "dist/index.js", "stdio")
}
