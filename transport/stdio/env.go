package stdio

import (
	"maps"
	"slices"
	"strings"
)

// defaultVars returns the names of the variables of this process that a
// server gets without [Command.InheritEnv]: what a program needs to run,
// find its files and talk to a terminal, and nothing that is likely to
// be a secret. They are those of the TypeScript SDK's stdio client
// (getDefaultEnvironment, modelled on sudo's env_reset), so that a
// server sees the same environment under ferry as under other clients.
func defaultVars(goos string) []string {
	if goos == "windows" {
		return []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
			"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"}
	}
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
}

// environment builds a server's environment from parent (this process's,
// as os.Environ returns it): the default variables of goos, or all of
// parent when inherit is set, with extra on top. Parent's entries keep
// their order and extra follows, sorted, so that the same inputs give
// the same environment. The result is never nil: nil would make exec
// pass parent whole.
func environment(parent []string, extra map[string]string, inherit bool, goos string) []string {
	// Windows compares names regardless of case (Path is PATH).
	norm := func(name string) string { return name }
	if goos == "windows" {
		norm = strings.ToUpper
	}
	keep := map[string]bool{}
	for _, name := range defaultVars(goos) {
		keep[name] = true
	}
	over := map[string]bool{}
	for name := range extra {
		over[norm(name)] = true
	}
	env := make([]string, 0, len(keep)+len(extra))
	for _, kv := range parent {
		name, value, _ := strings.Cut(kv, "=")
		key := norm(name)
		if over[key] || !inherit && (!keep[key] || isShellFunction(value)) {
			continue
		}
		env = append(env, kv)
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, name+"="+extra[name])
	}
	return env
}

// isShellFunction reports whether value is a function exported by bash,
// which a shell started by the server would run (the default variables
// are passed on only when they are plain values, as by the TypeScript
// SDK).
func isShellFunction(value string) bool { return strings.HasPrefix(value, "()") }
