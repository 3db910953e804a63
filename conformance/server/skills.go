package main

import (
	"embed"
	"io/fs"
	"time"

	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
)

// skillFiles are the skills of the sep-2640-skills-* scenarios: one under
// a prefix (acme/billing/refunds), one at the top; each has a
// subdirectory, which the directory scenario descends into.
//
//go:embed skills
var skillFiles embed.FS

// addSkills serves the skills extension (SEP-2640) with the skills of
// skillFiles.
func addSkills(s *server.Server) {
	sub, err := fs.Sub(skillFiles, "skills")
	if err == nil {
		err = skills.Serve(s, &skills.Options{TTL: 5 * time.Minute}).AddFS(sub)
	}
	if err != nil {
		panic(err) // the embedded skills are the program's own
	}
}
