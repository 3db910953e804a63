package interop

// The Skills extension (SEP-2640, io.modelcontextprotocol/skills) between
// ferry and the extension's TypeScript reference, @olaservo/ext-skills on
// the v2 TypeScript SDK (both pinned in node/package.json), both ways:
// its client (testdata/skills_tsclient.mjs) reads ferry's server, and
// ferry's client and CLI read its server (testdata/skills_tsserver.mjs),
// over either protocol era. Both sides serve testdata/skills, whose
// files are the truth every digest and byte is checked against.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

const (
	interopSkills = "testdata/skills"
	pdfSkillURI   = "skill://pdf-processing/SKILL.md"
	pdfFormsURI   = "skill://pdf-processing/references/FORMS.md"
)

// skillFiles reads every file of testdata/skills by its URI.
func skillFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(interopSkills, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(interopSkills, p)
		files["skill://"+filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// skillsURIs are the URIs of the skills in testdata/skills.
var skillsURIs = []string{"skill://acme/billing/refunds/SKILL.md", pdfSkillURI}

// ferrySkillsServer serves testdata/skills with ferry's skills package
// over Streamable HTTP; lie, when set, replaces FORMS.md's content
// without changing its manifest.
func ferrySkillsServer(t *testing.T, lie string) string {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "ferry-skills", Version: "1"}, nil)
	if err := skills.Serve(s, nil).AddFS(os.DirFS(interopSkills)); err != nil {
		t.Fatal(err)
	}
	if lie != "" {
		s.AddResource(&protocol.Resource{URI: pdfFormsURI, Name: "FORMS.md"}, func(context.Context, *server.Request, string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: pdfFormsURI, Text: lie}}}, nil
		})
	}
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { h.Close() })
	t.Cleanup(func() { s.Close() })
	return ts.URL
}

// tsSkillsSummary is what skills_tsclient.mjs prints.
type tsSkillsSummary struct {
	Error           string                  `json:"error"`
	SupportsSkills  bool                    `json:"supportsSkills"`
	DirectoryRead   bool                    `json:"directoryRead"`
	ProtocolVersion string                  `json:"protocolVersion"`
	Skills          map[string]tsSkillState `json:"skills"`
}

type tsSkillState struct {
	Name           string         `json:"name"`
	GetMatchesList bool           `json:"getMatchesList"`
	SkillMD        int            `json:"skillMD"`
	Files          map[string]int `json:"files"`
	Directory      []string       `json:"directory"`
	Error          string         `json:"error"`
}

func runTSSkillsClient(t *testing.T, url, era string) tsSkillsSummary {
	t.Helper()
	nodePackageBin(t, "@olaservo/ext-skills", "dist/client/index.js")
	script, err := filepath.Abs(filepath.Join("testdata", "skills_tsclient.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, nodeBin, script, nodeModules, url, era)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var sum tsSkillsSummary
	if err != nil || json.Unmarshal(out, &sum) != nil || sum.Error != "" {
		t.Fatalf("skills_tsclient.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	return sum
}

// TestSkillsTSClientFerryServer: the reference client lists ferry's
// skills, gets each entry (the same as listed), reads and verifies
// SKILL.md and every file of the manifest, and lists a skill's folder.
func TestSkillsTSClientFerryServer(t *testing.T) {
	files := skillFiles(t)
	url := ferrySkillsServer(t, "")
	for _, tc := range []struct{ era, want string }{{"legacy", "2025-11-25"}, {"auto", "2026-07-28"}} {
		t.Run(tc.want, func(t *testing.T) {
			sum := runTSSkillsClient(t, url, tc.era)
			if !sum.SupportsSkills || !sum.DirectoryRead || sum.ProtocolVersion != tc.want || len(sum.Skills) != len(skillsURIs) {
				t.Fatalf("summary: %+v", sum)
			}
			for _, uri := range skillsURIs {
				got := sum.Skills[uri]
				if got.Error != "" || !got.GetMatchesList || got.SkillMD != len(files[uri]) || got.Name != filepath.Base(filepath.Dir(uri)) {
					t.Errorf("%s: %+v", uri, got)
				}
				root := strings.TrimSuffix(uri, "SKILL.md")
				for fileURI, data := range files {
					if strings.HasPrefix(fileURI, root) && got.Files[fileURI] != len(data) {
						t.Errorf("%s: read %d bytes, want %d", fileURI, got.Files[fileURI], len(data))
					}
				}
			}
			want := []string{pdfSkillURI, "skill://pdf-processing/assets/", "skill://pdf-processing/references/", "skill://pdf-processing/templates/"}
			if dir := sum.Skills[pdfSkillURI].Directory; !slices.Equal(dir, want) {
				t.Errorf("resources/directory/read: %q, want %q", dir, want)
			}
		})
	}
}

// TestSkillsTSClientRefusesFerryLie: a ferry server whose FORMS.md is not
// what its manifest says is refused by the reference client, as ferry's
// own client refuses it.
func TestSkillsTSClientRefusesFerryLie(t *testing.T) {
	forms := string(skillFiles(t)[pdfFormsURI])
	sum := runTSSkillsClient(t, ferrySkillsServer(t, strings.Replace(forms, "every", "EVERY", 1)), "auto")
	if got := sum.Skills[pdfSkillURI].Error; !strings.Contains(got, "Digest mismatch for "+pdfFormsURI) {
		t.Errorf("the lie was not refused: %+v", sum.Skills[pdfSkillURI])
	}
	if got := sum.Skills[skillsURIs[0]]; got.Error != "" {
		t.Errorf("the honest skill: %+v", got)
	}
}

// tsSkillsServer is the command line of skills_tsserver.mjs.
func tsSkillsServer(t *testing.T) []string {
	t.Helper()
	nodePackageBin(t, "@olaservo/ext-skills", "dist/server/index.js")
	script, err := filepath.Abs(filepath.Join("testdata", "skills_tsserver.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(interopSkills)
	if err != nil {
		t.Fatal(err)
	}
	return []string{nodeBin, script, nodeModules, dir}
}

// TestSkillsFerryClientTSServer: ferry's client lists the reference
// server's skills, loads each and reads every file of its manifest,
// verified, with the bytes of testdata/skills, and lists a skill's folder;
// in either era.
func TestSkillsFerryClientTSServer(t *testing.T) {
	files := skillFiles(t)
	argv := tsSkillsServer(t)
	for _, pin := range []string{protocol.Version20251125, protocol.Version20260728} {
		t.Run(pin, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, &stdio.Command{Path: argv[0], Args: argv[1:]},
				&client.Options{Info: protocol.Implementation{Name: "ferry-interop", Version: "0.1.0"}, ProtocolVersion: pin})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer c.Close()
			sc := skills.NewClient(c)
			if c.ProtocolVersion() != pin || !sc.Supported() || !sc.DirectoryRead() {
				t.Fatalf("protocol %s, skills %v, directoryRead %v", c.ProtocolVersion(), sc.Supported(), sc.DirectoryRead())
			}
			entries, err := client.Collect(sc.Skills(ctx))
			if err != nil || len(entries) != len(skillsURIs) {
				t.Fatalf("skills/list: %d entries, %v", len(entries), err)
			}
			read := 0
			for i := range entries {
				read += readWholeSkill(t, ctx, sc, &entries[i], files)
			}
			if read != len(files) {
				t.Errorf("read %d files, testdata/skills has %d", read, len(files))
			}
			dir, err := sc.ReadDirectory(ctx, "skill://pdf-processing/references", "")
			if err != nil || len(dir.Resources) != 1 || dir.Resources[0].URI != pdfFormsURI {
				t.Errorf("resources/directory/read: %+v, %v", dir, err)
			}
		})
	}
}

// readWholeSkill loads a skill and reads every file of its manifest,
// comparing each with files; it returns how many it read.
func readWholeSkill(t *testing.T, ctx context.Context, sc *skills.Client, entry *skills.Skill, files map[string][]byte) int {
	t.Helper()
	got, err := sc.Get(ctx, entry.URI)
	if err != nil || got.URI != entry.URI || len(got.Resources) != len(entry.Resources) {
		t.Errorf("skills/get %s: %+v, %v", entry.URI, got, err)
	}
	loaded, err := sc.Load(ctx, entry)
	if err != nil {
		t.Fatalf("load %s: %v", entry.URI, err)
	}
	for _, r := range entry.Resources {
		sum := sha256.Sum256(files[r.URI])
		if r.Digest != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("%s: the manifest says %s", r.URI, r.Digest)
		}
		data, err := loaded.ReadFile(ctx, r.URI)
		if err != nil || !bytes.Equal(data, files[r.URI]) {
			t.Errorf("%s: %q, %v; want %q", r.URI, data, err, files[r.URI])
		}
	}
	return len(entry.Resources)
}

// TestSkillsCLISavesTSServerSkill: ferry skill --output-dir saves a skill
// of the reference server as a folder identical to the one it serves.
func TestSkillsCLISavesTSServerSkill(t *testing.T) {
	bin := ferryBinary(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"skill", "--format", "json", "pdf-processing", "--output-dir", out, "--"}, tsSkillsServer(t)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	var res struct{ SavedTo string }
	if err != nil || json.Unmarshal(stdout, &res) != nil || res.SavedTo != filepath.Join(out, "pdf-processing") {
		t.Fatalf("ferry skill: %v\n%s%s", err, stdout, stderr.String())
	}
	want := map[string][]byte{}
	for uri, data := range skillFiles(t) {
		if rel, ok := strings.CutPrefix(uri, "skill://pdf-processing/"); ok {
			want[rel] = data
		}
	}
	got := map[string][]byte{}
	filepath.WalkDir(res.SavedTo, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(res.SavedTo, p)
			got[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return err
	})
	if len(got) != len(want) {
		t.Errorf("saved %d files, want %d", len(got), len(want))
	}
	for rel, data := range want {
		if !bytes.Equal(got[rel], data) {
			t.Errorf("%s: saved %q, want %q", rel, got[rel], data)
		}
	}
}
