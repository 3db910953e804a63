package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferrymcp/ferry/skills"
)

// saveSkillOptions are the flags of `ferry skill` that save it.
type saveSkillOptions struct {
	dir   string // --output-dir: the folder the skill's folder goes in
	force bool   // --force: replace an existing folder of the skill
}

// skillFile is one verified file of a skill, at its path in the skill.
type skillFile struct {
	rel  string // a local path, in the OS's form
	data []byte
}

// saveSkill reads every file of a skill, verifies each against its entry,
// and only then writes them as the folder DIR/NAME. It returns that
// folder's path.
func saveSkill(ctx context.Context, sc *skills.Client, entry *skills.Skill, save saveSkillOptions) (string, error) {
	if entry.Dynamic {
		return "", fmt.Errorf("skill %s is dynamic: the server publishes no manifest to verify its files against, so it is not saved", entry.URI)
	}
	name := entry.Name()
	if !skills.ValidName(name) {
		return "", fmt.Errorf("skill %s: its name %q cannot name a folder (1-64 lowercase letters, digits and hyphens)", entry.URI, name)
	}
	// Refused before anything is read; the rename checks again.
	if _, err := os.Lstat(filepath.Join(save.dir, name)); err == nil && !save.force {
		return "", usageErrorf("%s exists: ferry replaces a skill's folder only with --force", filepath.Join(save.dir, name))
	}
	files, err := verifiedFiles(ctx, sc, entry)
	if err != nil {
		return "", err
	}
	return writeSkillFolder(save, name, files)
}

// verifiedFiles reads every file of the skill's manifest, each verified
// by the skills client (size, digest; SKILL.md's frontmatter too). A
// path that would leave the skill's folder is refused before anything
// is read.
func verifiedFiles(ctx context.Context, sc *skills.Client, entry *skills.Skill) ([]skillFile, error) {
	root := strings.TrimSuffix(entry.URI, skills.SkillFile)
	files := make([]skillFile, len(entry.Resources))
	seen := map[string]string{}
	for i, r := range entry.Resources {
		rel, err := localPath(strings.TrimPrefix(r.URI, root))
		if err != nil {
			return nil, fmt.Errorf("skill %s: file %s: %w", entry.URI, r.URI, err)
		}
		if other, dup := seen[rel]; dup {
			return nil, fmt.Errorf("skill %s: files %s and %s would both be saved as %s", entry.URI, other, r.URI, rel)
		}
		seen[rel] = r.URI
		files[i].rel = rel
	}
	loaded, err := sc.Load(ctx, entry)
	if err != nil {
		return nil, err
	}
	for i, r := range entry.Resources {
		if files[i].data, err = loaded.ReadFile(ctx, r.URI); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// localPath turns the path of a file in a skill's URI (percent-encoded,
// "/"-separated) into a local path that stays within the skill's folder.
func localPath(uriPath string) (string, error) {
	p, err := url.PathUnescape(uriPath)
	if err != nil {
		return "", fmt.Errorf("its path is not valid: %v", err)
	}
	if p == "" || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) || strings.Contains(p, `\`) {
		return "", fmt.Errorf("its path %q is not a file's", p)
	}
	local := filepath.FromSlash(p)
	if !filepath.IsLocal(local) || filepath.Clean(local) != local {
		return "", fmt.Errorf("its path %q would leave the skill's folder", p)
	}
	return local, nil
}

// writeSkillFolder writes files in a temporary folder in dir, then
// renames it to dir/name: an agent reading dir sees the whole skill or
// none of it. An existing dir/name is replaced only with --force: without
// it, the rename fails on a non-empty folder that appeared meanwhile.
func writeSkillFolder(save saveSkillOptions, name string, files []skillFile) (string, error) {
	final := filepath.Join(save.dir, name)
	if err := os.MkdirAll(save.dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(save.dir, "."+name+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, name)
	for _, f := range files {
		if err := writeNew(filepath.Join(staged, f.rel), f.data); err != nil {
			return "", err
		}
	}
	return final, replaceFolder(staged, final, filepath.Join(tmp, "old"), save.force)
}

// writeNew writes a file that must not exist yet, and its folders.
func writeNew(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// replaceFolder renames staged to final. With force, an existing final
// is moved to old first, and moved back if the rename fails.
func replaceFolder(staged, final, old string, force bool) error {
	err := os.Rename(staged, final)
	if err == nil || !force {
		return err
	}
	if err := os.Rename(final, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(staged, final); err != nil {
		return errors.Join(err, os.Rename(old, final))
	}
	return nil
}
