package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferrymcp/ferry/agent"
)

// The user's permissions (always, ask, never) for a tool or a server are
// kept per project: the folder ferry runs in, as folder trust is (see
// trust.go), so that "never run github__delete_repo" set in one
// repository holds there for every later run and chat, and nowhere else.

// permissionsFile holds the permissions, one a line: the project's
// absolute path, a tab, the tool (server__tool) or server, a tab, and
// always, ask or never. It is ferry/permissions in the user's
// configuration directory, next to trusted-folders.
func permissionsFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "ferry", "permissions"), nil
}

// permissionLine is a line of permissionsFile, split; ok is false for a
// line that is not one.
func permissionLine(line string) (dir, target string, perm agent.Permission, ok bool) {
	parts := strings.Split(line, "\t")
	if len(parts) != 3 {
		return "", "", "", false
	}
	p, err := agent.ParsePermission(parts[2])
	return parts[0], parts[1], p, err == nil
}

// readPermissions are the lines of permissionsFile (none when there is
// no file yet).
func readPermissions() ([]string, error) {
	path, err := permissionsFile()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}

// projectPermissions are the permissions kept for the project in dir.
func projectPermissions(dir string) (map[string]agent.Permission, error) {
	lines, err := readPermissions()
	if err != nil {
		return nil, err
	}
	canon := canonicalDir(dir)
	perms := map[string]agent.Permission{}
	for _, l := range lines {
		if d, target, perm, ok := permissionLine(l); ok && d == canon {
			perms[target] = perm
		}
	}
	return perms, nil
}

// keepPermission records the permission of target for the project in
// dir, in place of the one it had; "" removes it.
func keepPermission(dir, target string, perm agent.Permission) error {
	if strings.ContainsAny(target, "\t\n") {
		return fmt.Errorf("a tool or server name with a tab or a line break cannot be kept: %q", target)
	}
	lines, err := readPermissions()
	if err != nil {
		return err
	}
	canon := canonicalDir(dir)
	var kept []string
	for _, l := range lines {
		if d, t, _, ok := permissionLine(l); ok && (d != canon || t != target) {
			kept = append(kept, l)
		}
	}
	if perm != "" {
		kept = append(kept, canon+"\t"+target+"\t"+string(perm))
	}
	path, err := permissionsFile()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return writeFileAtomic(path, []byte(strings.Join(kept, "\n")+"\n"), 0o600)
}
