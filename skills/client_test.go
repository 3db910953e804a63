package skills_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
)

// recorder counts the requests a server serves, by method and resource.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) middleware(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
		name := req.Method
		if req.Method == protocol.MethodResourcesRead {
			name += " " + req.Name()
		}
		r.mu.Lock()
		r.seen = append(r.seen, name)
		r.mu.Unlock()
		return next(ctx, req)
	}
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.seen, ";")
}

const (
	skillURI = "skill://pdf-processing/SKILL.md"
	formsURI = "skill://pdf-processing/references/FORMS.md"
	goodMD   = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"
	formsTxt = "Supporting content.\n"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// tampering is a server whose listed entry describes goodMD and formsTxt
// while it serves served as SKILL.md: what a server whose skill changed,
// or an intermediary that rewrote it, looks like to a host.
func tampering(t *testing.T, served string, entryOf string, rec *recorder) *server.Server {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{rec.middleware}})
	s.DeclareExtension(skills.Extension, nil)
	entry := skills.Skill{URI: skillURI, Frontmatter: map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
		Resources: []skills.Resource{{URI: skillURI, Digest: sha(entryOf), Size: int64(len(entryOf))}, {URI: formsURI, Digest: sha(formsTxt), Size: int64(len(formsTxt))}}}
	s.HandleMethod(skills.MethodList, func(ctx context.Context, req *server.Request) (any, error) {
		return &skills.ListResult{Skills: []skills.Skill{entry}}, nil
	})
	for uri, text := range map[string]string{skillURI: served, formsURI: formsTxt, "skill://pdf-processing/secret.md": "unlisted"} {
		s.AddResource(&protocol.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: text}}}, nil
		})
	}
	return s
}

// TestLoadVerifies: a host lists without reading anything; loading reads
// SKILL.md and refuses it, with a typed error, on a size, digest or
// frontmatter mismatch, reading nothing more; an unlisted file is refused
// unread.
func TestLoadVerifies(t *testing.T) {
	evil := strings.Replace(goodMD, "Skill body.", "Evil body!!", 1)
	exfil := strings.Replace(goodMD, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1)
	for _, tc := range []struct {
		name, served, entryOf, read string
		want                        skills.Failure
		reads                       string
	}{
		{"verified", goodMD, goodMD, "references/FORMS.md", 0, skillURI + ";" + formsURI},
		{"digest", evil, goodMD, "", skills.DigestMismatch, skillURI},
		{"size", goodMD + "extra bytes\n", goodMD, "", skills.SizeMismatch, skillURI},
		{"frontmatter", exfil, exfil, "", skills.FrontmatterMismatch, skillURI},
		{"unlisted", goodMD, goodMD, "secret.md", skills.Unlisted, skillURI},
	} {
		for _, v := range eras {
			t.Run(tc.name+" "+v, func(t *testing.T) {
				rec := &recorder{}
				sc := skills.NewClient(dial(t, tampering(t, tc.served, tc.entryOf, rec), v))
				entries, err := collect(sc)
				if err != nil || len(entries) != 1 {
					t.Fatalf("%v %v", entries, err)
				}
				if got := reads(rec); got != "" {
					t.Fatalf("listing read %s", got)
				}
				l, err := sc.Load(context.Background(), &entries[0])
				if err == nil && tc.read != "" {
					_, err = l.ReadFile(context.Background(), tc.read)
				}
				var ve *skills.VerifyError
				switch {
				case tc.want == 0 && err != nil:
					t.Fatal(err)
				case tc.want != 0 && (!errors.As(err, &ve) || ve.Failure != tc.want || !errors.Is(err, skills.ErrVerification)):
					t.Fatalf("error %v, want a %s", err, tc.want)
				}
				if got := reads(rec); got != tc.reads {
					t.Errorf("reads %s, want %s", got, tc.reads)
				}
			})
		}
	}
}

func reads(rec *recorder) string {
	var out []string
	for _, s := range strings.Split(rec.String(), ";") {
		if uri, ok := strings.CutPrefix(s, protocol.MethodResourcesRead+" "); ok {
			out = append(out, uri)
		}
	}
	return strings.Join(out, ";")
}

func collect(sc *skills.Client) ([]skills.Skill, error) {
	var out []skills.Skill
	for s, err := range sc.Skills(context.Background()) {
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// TestLoadReadsOnce: a loaded skill's files are read when asked for,
// once, and verified; SKILL.md is not read again.
func TestLoadReadsOnce(t *testing.T) {
	rec := &recorder{}
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{rec.middleware}})
	if err := skills.Serve(s, nil).AddFS(dirFS("testdata/catalog")); err != nil {
		t.Fatal(err)
	}
	sc := skills.NewClient(dial(t, s, protocol.LatestVersion))
	entry, err := sc.Get(context.Background(), skillURI)
	if err != nil {
		t.Fatal(err)
	}
	l, err := sc.Load(context.Background(), entry)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, name := range []string{"templates/regional/eu-invoice.md", "skill://pdf-processing/templates/regional/eu-invoice.md", "SKILL.md"} {
			if b, err := l.ReadFile(context.Background(), name); err != nil || len(b) == 0 {
				t.Fatalf("%s: %q %v", name, b, err)
			}
		}
	}
	if got, want := reads(rec), skillURI+";skill://pdf-processing/templates/regional/eu-invoice.md"; got != want {
		t.Errorf("reads %s, want %s", got, want)
	}
	for _, name := range []string{"../acme/billing/refunds/SKILL.md", "skill://acme/billing/refunds/SKILL.md", "/etc/passwd"} {
		if _, err := l.ReadFile(context.Background(), name); err == nil {
			t.Errorf("%s was read as a file of the skill", name)
		}
	}
}

// TestLoadRefusesEntries: entries a host must not load are refused before
// anything is read.
func TestLoadRefusesEntries(t *testing.T) {
	fm := map[string]any{"name": "pdf-processing", "description": "d"}
	md := skills.Resource{URI: skillURI, Digest: sha(goodMD), Size: int64(len(goodMD))}
	many := []skills.Resource{md}
	for i := range skills.MaxResources {
		many = append(many, skills.Resource{URI: fmt.Sprintf("skill://pdf-processing/%d", i), Digest: sha(""), Size: 0})
	}
	for _, tc := range []struct {
		name  string
		entry skills.Skill
		want  skills.Failure
	}{
		{"name not the path", skills.Skill{URI: "skill://other/SKILL.md", Frontmatter: fm, Resources: []skills.Resource{md}}, skills.InvalidEntry},
		{"not a SKILL.md", skills.Skill{URI: "skill://pdf-processing/README.md", Frontmatter: fm, Dynamic: true}, skills.InvalidEntry},
		{"SKILL.md unlisted", skills.Skill{URI: skillURI, Frontmatter: fm, Resources: []skills.Resource{}}, skills.InvalidEntry},
		{"outside", skills.Skill{URI: skillURI, Frontmatter: fm, Resources: []skills.Resource{md, {URI: "skill://x/y", Digest: sha(""), Size: 0}}}, skills.InvalidEntry},
		{"too many", skills.Skill{URI: skillURI, Frontmatter: fm, Resources: many}, skills.OverLimit},
		{"too large", skills.Skill{URI: skillURI, Frontmatter: fm, Resources: []skills.Resource{md, {URI: formsURI, Digest: sha(""), Size: skills.MaxTotalSize}}}, skills.OverLimit},
	} {
		rec := &recorder{}
		sc := skills.NewClient(dial(t, tampering(t, goodMD, goodMD, rec), protocol.LatestVersion))
		_, err := sc.Load(context.Background(), &tc.entry)
		var ve *skills.VerifyError
		if !errors.As(err, &ve) || ve.Failure != tc.want {
			t.Errorf("%s: %v, want a %s", tc.name, err, tc.want)
		}
		if got := reads(rec); got != "" {
			t.Errorf("%s: read %s", tc.name, got)
		}
	}
}

// TestEntryJSON: resources is an array or "dynamic"; anything else is an
// entry hosts must not load.
func TestEntryJSON(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{`{"uri":"u","frontmatter":{"name":"n"},"resources":"dynamic"}`, ""},
		{`{"uri":"u","frontmatter":{"name":"n"},"resources":[]}`, ""},
		{`{"uri":"u","frontmatter":{"name":"n"}}`, `resources is missing, neither an array nor "dynamic"`},
		{`{"uri":"u","frontmatter":{"name":"n"},"resources":"static"}`, `resources is "static"`},
		{`{"uri":"u","frontmatter":[],"resources":[]}`, "frontmatter is not an object"},
	} {
		var s skills.Skill
		err := json.Unmarshal([]byte(tc.in), &s)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
			continue
		}
		if err == nil {
			out, _ := json.Marshal(s)
			if !strings.Contains(string(out), `"resources":`) {
				t.Errorf("%s: encodes as %s", tc.in, out)
			}
		}
	}
}

// TestClientCache: a listing and an entry are kept for their ttlMs, then
// asked for again; without caching hints (the legacy era) nothing is
// kept.
func TestClientCache(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    string // the skills requests after each step
	}{
		{protocol.LatestVersion, "1 1 2"},
		{protocol.Version20251125, "1 2 3"},
	} {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{}
			s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{rec.middleware}})
			if err := skills.Serve(s, &skills.Options{TTL: time.Minute}).AddFS(dirFS("testdata/catalog")); err != nil {
				t.Fatal(err)
			}
			sc := skills.NewClient(dial(t, s, tc.version))
			var counts []string
			for _, wait := range []time.Duration{0, 59 * time.Second, time.Second} {
				time.Sleep(wait)
				if _, err := sc.List(context.Background(), ""); err != nil {
					t.Fatal(err)
				}
				if _, err := sc.Get(context.Background(), skillURI); err != nil {
					t.Fatal(err)
				}
				counts = append(counts, fmt.Sprint(strings.Count(rec.String(), skills.MethodList)))
				if g := strings.Count(rec.String(), skills.MethodGet); fmt.Sprint(g) != counts[len(counts)-1] {
					t.Errorf("%s: %d gets, %s lists", tc.version, g, counts[len(counts)-1])
				}
			}
			if got := strings.Join(counts, " "); got != tc.want {
				t.Errorf("%s: requests %s, want %s", tc.version, got, tc.want)
			}
		})
	}
}

// TestClientNotSupported: a server without the extension is not asked.
func TestClientNotSupported(t *testing.T) {
	rec := &recorder{}
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{rec.middleware}})
	sc := skills.NewClient(dial(t, s, protocol.LatestVersion))
	if _, err := sc.List(context.Background(), ""); !errors.Is(err, skills.ErrNotSupported) {
		t.Errorf("List: %v", err)
	}
	if _, err := sc.ReadDirectory(context.Background(), "skill://x", ""); !errors.Is(err, skills.ErrNotSupported) {
		t.Errorf("ReadDirectory: %v", err)
	}
	if strings.Contains(rec.String(), "skills/") || strings.Contains(rec.String(), "directory") {
		t.Errorf("sent %s", rec)
	}
}
