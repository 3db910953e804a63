package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/skills"
)

var skillsCommand = &command{
	name:    "skills",
	args:    "[SERVER]",
	summary: "the skills servers publish (the skills extension)",
	help: `Lists the skills of every server that declares the skills extension
(io.modelcontextprotocol/skills), or of one, as a table at a terminal, or as
JSON otherwise: each skill's URI, frontmatter and manifest (its files with
their sizes and digests). A server named that does not declare the extension
is an error (exit 1). Show one with ferry skill SERVER NAME.`,
	example: `ferry skills docs
ferry skills --format json | jq -r '.skills[].uri'`,
	setup: noFlags(cmdSkills),
}

var skillCommand = &command{
	name:    "skill",
	args:    "[SERVER] NAME",
	summary: "one skill: its frontmatter and files; --output-dir saves it verified",
	help: `Shows one skill: its frontmatter and its manifest, every file with its size
and digest. NAME is the skill's name, its path ("acme/billing/refunds") or the
URI of its SKILL.md; SERVER may be left out when there is one server.

With --output-dir DIR, reads every file of the skill, verifies each against
the manifest (size and sha256 digest, and SKILL.md's frontmatter against the
listed one), and only then writes the skill as the folder DIR/NAME, as agents
read skills from disk: written in a temporary folder and renamed into place,
never over an existing folder without --force. A file whose path would leave
the folder, or that fails verification, is named in the error (exit 2), and
nothing is written. A dynamic skill, having no manifest, is not saved.`,
	example: `ferry skill docs pdf-processing
ferry skill docs pdf-processing --output-dir ~/.claude/skills`,
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		var save saveSkillOptions
		fs.StringVar(&save.dir, "output-dir", "", "save the skill, every file verified, as the folder `DIR`/NAME")
		fs.BoolVar(&save.force, "force", false, "with --output-dir, replace the skill's folder if it exists")
		return func(ctx context.Context, o *cli) error { return cmdSkill(ctx, o, save) }
	},
}

// skillOut is a skill in the JSON of `ferry skills` and `ferry skill`.
type skillOut struct {
	Server      string         `json:"server"`
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   any            `json:"resources"` // []skills.Resource or "dynamic"
	SavedTo     string         `json:"savedTo,omitempty"`
}

func newSkillOut(server string, s *skills.Skill) skillOut {
	var res any = s.Resources
	if s.Dynamic {
		res = "dynamic"
	} else if s.Resources == nil {
		res = []skills.Resource{}
	}
	return skillOut{Server: server, URI: s.URI, Frontmatter: s.Frontmatter, Resources: res}
}

// declaresSkills reports whether the server declares the skills extension.
func declaresSkills(c *client.Client) bool { return skills.NewClient(c).Supported() }

// errNoSkills is a server, or every server, without the extension.
func errNoSkills(names []string) error {
	if len(names) == 1 {
		return usageErrorf("server %q does not declare the skills extension (%s): it publishes no skills", names[0], skills.Extension)
	}
	return usageErrorf("no server declares the skills extension (%s): %s publish no skills", skills.Extension, strings.Join(names, ", "))
}

func cmdSkills(ctx context.Context, o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	sess, err := o.startOneOrAll(ctx, servers, "skills")
	if err != nil {
		return err
	}
	defer sess.Close()
	lists, err := listAll(ctx, sess, declaresSkills, func(c *client.Client) ([]skills.Skill, error) {
		return client.Collect(skills.NewClient(c).Skills(ctx))
	})
	if ready := readyNames(sess); len(ready) > 0 && !slices.ContainsFunc(lists, func(l listed[skills.Skill]) bool { return l.server != "" }) {
		return errors.Join(errNoSkills(ready), err)
	}
	out := []skillOut{}
	for _, l := range lists {
		for i := range l.items {
			out = append(out, newSkillOut(l.server, &l.items[i]))
		}
	}
	if o.json {
		return errors.Join(o.printJSON(map[string]any{"skills": out}), err)
	}
	o.printSkillTable(out)
	return err
}

// readyNames are the names of the servers that started.
func readyNames(sess *session) []string {
	var names []string
	for _, s := range sess.Servers() {
		if s.Status().State == host.Ready {
			names = append(names, s.Name())
		}
	}
	return names
}

func (o *cli) printSkillTable(out []skillOut) {
	many := slices.ContainsFunc(out, func(s skillOut) bool { return s.Server != out[0].Server })
	tab := o.table("SKILL", "FILES", "URI", "DESCRIPTION")
	for _, s := range out {
		name, _ := s.Frontmatter["name"].(string)
		if many {
			name = s.Server + "." + name
		}
		desc, _ := s.Frontmatter["description"].(string)
		tab.add(name, filesSummary(s.Resources), s.URI, desc)
	}
	tab.flush()
}

// filesSummary is "3 (2.1 kB)" for a manifest, "dynamic" otherwise.
func filesSummary(resources any) string {
	list, ok := resources.([]skills.Resource)
	if !ok {
		return "dynamic"
	}
	var total int64
	for _, r := range list {
		total += r.Size
	}
	return fmt.Sprintf("%d (%s)", len(list), size(int(total)))
}

func cmdSkill(ctx context.Context, o *cli, save saveSkillOptions) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	server, name, err := skillTarget(o.args, servers)
	if err != nil {
		return err
	}
	sess, err := o.startServers(ctx, servers, server)
	if err != nil {
		return err
	}
	defer sess.Close()
	if sess.startErr != nil {
		return sess.startErr
	}
	srv, err := sess.Server(server)
	if err != nil {
		return err
	}
	return srv.Do(ctx, func(c *client.Client) error {
		sc := skills.NewClient(c)
		if !sc.Supported() {
			return errNoSkills([]string{server})
		}
		entry, err := findSkill(ctx, sc, server, name)
		if err != nil {
			return err
		}
		out := newSkillOut(server, entry)
		if save.dir != "" {
			if out.SavedTo, err = saveSkill(ctx, sc, entry, save); err != nil {
				return err
			}
		}
		return o.printSkill(out, entry)
	})
}

// skillTarget reads "SERVER NAME", or "NAME" when there is one server.
func skillTarget(args []string, servers []*config.Server) (server, name string, err error) {
	switch {
	case len(args) == 2:
		return args[0], args[1], nil
	case len(args) == 1 && len(servers) == 1:
		return servers[0].Name, args[0], nil
	case len(args) == 1:
		return "", "", usageErrorf("skill needs the SERVER before the NAME (configured: %s)", serverNames(servers))
	}
	return "", "", usageErrorf("skill needs a skill: ferry skill SERVER NAME")
}

// findSkill finds a skill by the URI of its SKILL.md (asked with
// skills/get, listed or not), or among the listed ones by its name or
// path.
func findSkill(ctx context.Context, sc *skills.Client, server, name string) (*skills.Skill, error) {
	if strings.Contains(name, "://") {
		return sc.Get(ctx, name)
	}
	var found []skills.Skill
	for s, err := range sc.Skills(ctx) {
		if err != nil {
			return nil, err
		}
		if s.Name() == name || skillPath(s.URI) == name {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, usageErrorf("server %q lists no skill %q (ferry skills lists them)", server, name)
	case 1:
		return &found[0], nil
	}
	uris := make([]string, len(found))
	for i, s := range found {
		uris[i] = s.URI
	}
	return nil, usageErrorf("several skills of server %q are named %q: %s; give the path or the URI", server, name, strings.Join(uris, ", "))
}

// skillPath is the skill path of a SKILL.md's URI: what lies between the
// scheme and "/SKILL.md" ("acme/billing/refunds").
func skillPath(uri string) string {
	_, rest, _ := strings.Cut(uri, "://")
	return strings.TrimSuffix(rest, "/"+skills.SkillFile)
}

// printSkill prints a skill: JSON, or its frontmatter and its files.
func (o *cli) printSkill(out skillOut, entry *skills.Skill) error {
	if o.json {
		return o.printJSON(out)
	}
	fields := o.table("FIELD", "VALUE")
	fields.add("uri", entry.URI)
	for _, k := range frontmatterKeys(entry.Frontmatter) {
		fields.add(k, fieldText(entry.Frontmatter[k]))
	}
	fields.flush()
	fmt.Fprintln(o.stdout)
	if entry.Dynamic {
		fmt.Fprintln(o.stdout, "Files: dynamic (the server publishes no manifest for this skill)")
	} else {
		files := o.table("FILE", "SIZE", "DIGEST")
		root := strings.TrimSuffix(entry.URI, skills.SkillFile)
		for _, r := range entry.Resources {
			files.add(strings.TrimPrefix(r.URI, root), strconv.FormatInt(r.Size, 10), r.Digest)
		}
		files.flush()
	}
	if out.SavedTo != "" {
		fmt.Fprintf(o.stdout, "\nSaved to %s, every file verified.\n", o.text(out.SavedTo))
	}
	return nil
}

// frontmatterKeys are the keys of a frontmatter, name and description
// first, then the others in order.
func frontmatterKeys(fm map[string]any) []string {
	keys := make([]string, 0, len(fm))
	for k := range fm {
		if k != "name" && k != "description" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return append([]string{"name", "description"}, keys...)
}

// fieldText is a frontmatter value as text: a string as it is, anything
// else as JSON.
func fieldText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
