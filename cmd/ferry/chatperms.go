package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/host"
)

const permissionsUsage = "usage: /permissions [SERVER|SERVER__TOOL always|ask|never|default]"

// permissions is /permissions: without arguments it shows the approval
// mode and the permission of every server and tool; with a name and a
// permission it sets it, for this chat and for the later runs in this
// project ("default" removes it).
func (c *chat) permissions(ctx context.Context, args string) {
	f := strings.Fields(args)
	switch len(f) {
	case 0:
		c.showPermissions(ctx)
	case 2:
		c.setPermission(ctx, f[0], f[1])
	default:
		c.out.line("%s", permissionsUsage)
	}
}

// showPermissions lists each server and its tools with the permission
// that applies to them, and the permissions kept for names not there
// now (a server that is down, a tool gone).
func (c *chat) showPermissions(ctx context.Context) {
	perms := c.r.policy.Permissions()
	c.out.line("approval %s · permissions kept for %s (/permissions NAME always|ask|never|default):", c.r.policy.Mode, projectDir())
	tools, err := c.r.hostTools(ctx)
	shown := map[string]bool{}
	for _, s := range c.r.sess.Servers() {
		server := s.Name()
		shown[server] = true
		c.out.line("  %-44s %s", server, permissionText(perms[server], "", c.r.policy.Mode))
		for _, t := range tools {
			if t.Server != server {
				continue
			}
			shown[t.Name] = true
			c.out.line("    %-42s %s", t.Name+readOnlyNote(&t), toolPermissionText(perms, &t, c.r.policy.Mode))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(perms)) {
		if !shown[name] {
			c.out.line("  %-44s %s (not there now)", name, perms[name])
		}
	}
	if err != nil {
		c.out.line("! %v", err)
	}
}

// setPermission sets the permission of a server or tool there is, and
// keeps it for the project.
func (c *chat) setPermission(ctx context.Context, name, value string) {
	perm := agent.Permission("")
	if value != "default" {
		p, err := agent.ParsePermission(value)
		if err != nil {
			c.out.line("! %v (or default)", err)
			return
		}
		perm = p
	}
	if !c.knownTarget(ctx, name) && c.r.policy.Permissions()[name] == "" {
		c.out.line("! no server or tool named %q (/tools lists them as SERVER__TOOL)", name)
		return
	}
	c.r.policy.SetPermission(name, perm)
	if err := keepPermission(projectDir(), name, perm); err != nil {
		c.out.line("! %s: %s for this chat only; it could not be kept: %v", name, orDefault(perm), err)
		return
	}
	c.out.line("(%s: %s, kept for %s)", name, orDefault(perm), projectDir())
}

// knownTarget reports whether name is a server's or a tool's.
func (c *chat) knownTarget(ctx context.Context, name string) bool {
	for _, s := range c.r.sess.Servers() {
		if s.Name() == name {
			return true
		}
	}
	tools, _ := c.r.hostTools(ctx)
	return slices.ContainsFunc(tools, func(t host.Tool) bool { return t.Name == name })
}

// toolPermissionText is the permission that applies to t: its own, else
// its server's, else the mode's.
func toolPermissionText(perms map[string]agent.Permission, t *host.Tool, mode agent.Mode) string {
	if p, ok := perms[t.Name]; ok {
		return string(p)
	}
	return permissionText(perms[t.Server], t.Server, mode)
}

// permissionText says a permission, where it comes from (a server's),
// or that the mode decides.
func permissionText(p agent.Permission, from string, mode agent.Mode) string {
	switch {
	case p == "":
		return fmt.Sprintf("- (approval %s decides)", mode)
	case from != "":
		return fmt.Sprintf("%s (from %s)", p, from)
	}
	return string(p)
}

func orDefault(p agent.Permission) string {
	if p == "" {
		return "default"
	}
	return string(p)
}

// readOnlyNote marks a tool that says it is read-only: the ones mode
// plan runs.
func readOnlyNote(t *host.Tool) string {
	if a := t.Tool.Annotations; a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		return " (read-only)"
	}
	return ""
}
