package providers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// nonStandardDeps lists the packages outside the standard library that
// pkg links.
func nonStandardDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// The provider clients are ferry's own, on the standard library: the
// official SDKs (openai-go alone took 128 s of CPU and 2.8 GB to build,
// and 30 MiB of the ferry command) stay in the wire test module, which
// holds the clients to them. Whatever links the providers links no
// module that the agent itself does not.
func TestNoProviderSDKLinked(t *testing.T) {
	base := nonStandardDeps(t, "github.com/ferrymcp/ferry/agent")
	for _, dep := range nonStandardDeps(t, ".") {
		if !slices.Contains(base, dep) && !strings.HasPrefix(dep, "github.com/ferrymcp/ferry/") {
			t.Errorf("agent/providers links %s, which the agent does not", dep)
		}
	}
}
