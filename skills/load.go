package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"
)

// maxDescription is the longest description the Agent Skills
// specification allows, in characters.
const maxDescription = 1024

// file is one file of a static skill, read when the skill was added.
type file struct {
	rel    string // path in the skill, "/"-separated
	data   []byte
	digest string
}

// loaded is a skill read and checked, not yet served.
type loaded struct {
	path        string // the skill path: prefix segments and the name
	frontmatter map[string]any
	files       []file // sorted by rel; SKILL.md among them
}

// readSkill reads the skill whose directory is dir in fsys and checks it
// against the specification: a SKILL.md whose frontmatter has a valid
// name equal to the directory's final segment and a description, files
// within the skill only, and the limits on their number and total size.
// Errors name the file at fault.
func readSkill(fsys fs.FS, skillPath, dir string) (*loaded, error) {
	if err := checkSkillPath(skillPath); err != nil {
		return nil, err
	}
	l := &loaded{path: skillPath}
	md := path.Join(dir, SkillFile)
	data, err := readLimited(fsys, md, MaxTotalSize)
	if err != nil {
		return nil, fmt.Errorf("skills: skill %q: %w", skillPath, err)
	}
	if l.frontmatter, err = checkFrontmatter(data, path.Base(skillPath)); err != nil {
		return nil, fmt.Errorf("skills: %s: %w", md, err)
	}
	if err := l.readFiles(fsys, dir); err != nil {
		return nil, err
	}
	return l, nil
}

// checkFrontmatter parses SKILL.md's frontmatter and checks its name and
// description.
func checkFrontmatter(data []byte, dirName string) (map[string]any, error) {
	fm, _, err := ParseFrontmatter(data)
	if err != nil {
		return nil, err
	}
	name, ok := fm["name"].(string)
	switch {
	case !ok:
		return nil, errors.New("frontmatter has no name")
	case !ValidName(name):
		return nil, fmt.Errorf("name %q breaks the naming rules (1-64 lowercase letters, digits and hyphens, no leading, trailing or double hyphen)", name)
	case name != dirName:
		return nil, fmt.Errorf("name %q does not match its directory %q", name, dirName)
	}
	desc, ok := fm["description"].(string)
	switch {
	case !ok || strings.TrimSpace(desc) == "":
		return nil, errors.New("frontmatter has no description")
	case utf8.RuneCountInString(desc) > maxDescription:
		return nil, fmt.Errorf("description is longer than %d characters", maxDescription)
	}
	return fm, nil
}

// ValidName reports whether name satisfies the Agent Skills naming
// rules: 1 to 64 lowercase letters, digits and hyphens, with no leading,
// trailing or consecutive hyphens.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// checkSkillPath checks a skill path: "/"-separated segments, none empty
// or "." or "..".
func checkSkillPath(p string) error {
	if p == "" || !fs.ValidPath(p) || p == "." {
		return fmt.Errorf("skills: invalid skill path %q", p)
	}
	return nil
}

// readFiles reads every file of the skill at dir, those of nested skills
// included. Names starting with "." (.git, .DS_Store) are not part of
// the skill.
func (l *loaded) readFiles(fsys fs.FS, dir string) error {
	var total int64
	return fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("skills: %w", err)
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if err := checkRegular(fsys, dir, p, d); err != nil {
			return err
		}
		if len(l.files) == MaxResources {
			return fmt.Errorf("skills: %s: skill %q has more than %d files", p, l.path, MaxResources)
		}
		data, err := readLimited(fsys, p, MaxTotalSize-total)
		if err != nil {
			return fmt.Errorf("skills: skill %q: %w", l.path, err)
		}
		total += int64(len(data))
		sum := sha256.Sum256(data)
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		if dir == "." {
			rel = p
		}
		l.files = append(l.files, file{rel: rel, data: data, digest: "sha256:" + hex.EncodeToString(sum[:])})
		return nil
	})
}

// checkRegular refuses what is not a regular file of the skill: devices,
// pipes, and symbolic links that lead out of the skill directory or to a
// directory (or whose target fsys cannot tell).
func checkRegular(fsys fs.FS, dir, p string, d fs.DirEntry) error {
	if d.Type().IsRegular() {
		return nil
	}
	if d.Type()&fs.ModeSymlink == 0 {
		return fmt.Errorf("skills: %s is not a regular file", p)
	}
	target, err := fs.ReadLink(fsys, p)
	if err != nil {
		return fmt.Errorf("skills: %s is a symbolic link whose target cannot be checked: %w", p, err)
	}
	resolved := path.Join(path.Dir(p), target)
	if path.IsAbs(target) || !within(resolved, dir) {
		return fmt.Errorf("skills: %s is a file outside the skill (a link to %s)", p, target)
	}
	info, err := fs.Stat(fsys, p)
	if err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("skills: %s is a link to something other than a file", p)
	}
	return nil
}

// within reports whether p is dir or below it (both clean, "."
// meaning the root).
func within(p, dir string) bool {
	if strings.HasPrefix(p, "../") || p == ".." {
		return false
	}
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// readLimited reads the file at p of at most limit bytes.
func readLimited(fsys fs.FS, p string, limit int64) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: the skill's files take more than %d bytes", p, MaxTotalSize)
	}
	return data, nil
}
