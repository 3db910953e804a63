package skills_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
	"github.com/ferrymcp/ferry/transport/memory"
)

var eras = []string{protocol.Version20251125, protocol.LatestVersion}

// dial connects a client of revision version to s over an in-memory
// pipe.
func dial(t testing.TB, s *server.Server, version string) *client.Client {
	t.Helper()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, &client.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); conn.Close() })
	return c
}

// catalog serves testdata/catalog with opts.
func catalog(t *testing.T, opts *skills.Options) *server.Server {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "skills-test", Version: "1"}, nil)
	if err := skills.Serve(s, opts).AddFS(os.DirFS("testdata/catalog")); err != nil {
		t.Fatal(err)
	}
	return s
}

func digest(t *testing.T, name string) (string, int64) {
	t.Helper()
	b, err := os.ReadFile("testdata/catalog/" + name)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), int64(len(b))
}

// TestServeDeclares: the extension is declared with directoryRead, and
// the resources capability with it, to clients of both eras.
func TestServeDeclares(t *testing.T) {
	for _, v := range eras {
		caps := dial(t, catalog(t, nil), v).ServerCapabilities()
		ext, _ := caps.Extensions[skills.Extension].(map[string]any)
		if ext["directoryRead"] != true || caps.Resources == nil {
			t.Errorf("%s: extensions %v, resources %v", v, caps.Extensions, caps.Resources)
		}
	}
}

// TestServeList: skills/list pages through every skill with complete
// manifests; the caching hints and resultType go to stateless clients.
func TestServeList(t *testing.T) {
	for _, v := range eras {
		c := dial(t, catalog(t, &skills.Options{PageSize: 1, TTL: 5 * time.Minute}), v)
		var uris []string
		var pages []skills.ListResult
		for cursor := ""; ; {
			var res skills.ListResult
			if err := c.CallMethod(context.Background(), skills.MethodList, map[string]string{"cursor": cursor}, &res); err != nil {
				t.Fatal(err)
			}
			pages = append(pages, res)
			for _, s := range res.Skills {
				uris = append(uris, s.URI)
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if got := strings.Join(uris, " "); got != "skill://acme/billing/refunds/SKILL.md skill://pdf-processing/SKILL.md" || len(pages) != 2 {
			t.Fatalf("%s: %d pages of %s", v, len(pages), got)
		}
		stateless := v == protocol.LatestVersion
		if ttl := pages[0].TTLMs; stateless != (ttl != nil && *ttl == 300000 && pages[0].CacheScope == protocol.CachePublic && pages[0].ResultType == protocol.ResultComplete) {
			t.Errorf("%s: caching hints %+v %+v", v, pages[0].CacheFields, pages[0].ResultFields)
		}
		pdf := pages[1].Skills[0]
		if pdf.Name() != "pdf-processing" || pdf.Frontmatter["license"] != "Apache-2.0" ||
			pdf.Frontmatter["metadata"].(map[string]any)["version"] != "2.1.0" || len(pdf.Resources) != 4 {
			t.Fatalf("%s: entry %+v", v, pdf)
		}
		for _, r := range pdf.Resources {
			d, n := digest(t, strings.TrimPrefix(r.URI, "skill://"))
			if r.Digest != d || r.Size != n {
				t.Errorf("%s: %s digest %s size %d, want %s %d", v, r.URI, r.Digest, r.Size, d, n)
			}
		}
	}
}

// TestServeGet: skills/get answers for a served skill, and -32602 for a
// URI that is not one.
func TestServeGet(t *testing.T) {
	for _, v := range eras {
		c := dial(t, catalog(t, nil), v)
		var res skills.GetResult
		err := c.CallMethod(context.Background(), skills.MethodGet, map[string]string{"uri": "skill://acme/billing/refunds/SKILL.md"}, &res)
		if err != nil || res.Skill.Description() != "Process customer refund requests per company policy" || len(res.Skill.Resources) != 2 {
			t.Fatalf("%s: %+v %v", v, res.Skill, err)
		}
		for _, uri := range []string{"skill://acme/billing/SKILL.md", "skill://pdf-processing/references/FORMS.md", ""} {
			err := c.CallMethod(context.Background(), skills.MethodGet, map[string]string{"uri": uri}, &res)
			if !isCode(err, jsonrpc.CodeInvalidParams) || !strings.Contains(err.Error(), "No skill is served at "+uri) {
				t.Errorf("%s: get %q: %v", v, uri, err)
			}
		}
	}
}

func isCode(err error, code int64) bool {
	var e *jsonrpc.Error
	return errors.As(err, &e) && e.Code == code
}

// TestServeResources: every file is a resource; SKILL.md carries the
// name, description and text/markdown.
func TestServeResources(t *testing.T) {
	c := dial(t, catalog(t, nil), protocol.LatestVersion)
	got := map[string]protocol.Resource{}
	for r, err := range c.Resources(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got[r.URI] = r
	}
	if len(got) != 6 {
		t.Errorf("%d resources: %v", len(got), got)
	}
	md := got["skill://pdf-processing/SKILL.md"]
	if md.Name != "pdf-processing" || md.Description != "Extract, fill, and assemble PDF documents" || md.MIMEType != "text/markdown" {
		t.Errorf("SKILL.md resource %+v", md)
	}
	res, err := c.ReadResource(context.Background(), "skill://pdf-processing/templates/invoice.md")
	if err != nil || res.Contents[0].Text != "# Invoice\n\nAmount: {{amount}}\n" || res.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("read: %+v %v", res, err)
	}
}

// TestServeDirectory: every directory level is a directory resource
// listing its direct children; anything else is -32602.
func TestServeDirectory(t *testing.T) {
	for _, v := range eras {
		c := dial(t, catalog(t, &skills.Options{PageSize: 2}), v)
		for _, tc := range []struct{ uri, want string }{
			{"skill://pdf-processing", "skill://pdf-processing/SKILL.md text/markdown;skill://pdf-processing/references inode/directory;skill://pdf-processing/templates inode/directory"},
			{"skill://pdf-processing/templates", "skill://pdf-processing/templates/invoice.md text/markdown;skill://pdf-processing/templates/regional inode/directory"},
			{"skill://acme", "skill://acme/billing inode/directory"},
			{"skill://acme/billing/refunds/examples", "skill://acme/billing/refunds/examples/email.md text/markdown"},
		} {
			if got := readDir(t, c, tc.uri); got != tc.want {
				t.Errorf("%s: %s:\n got %s\nwant %s", v, tc.uri, got, tc.want)
			}
		}
		for _, uri := range []string{"skill://pdf-processing/SKILL.md", "skill://pdf-processing/nope", "skill://pdf-processing/", "skill://"} {
			var res skills.ReadDirectoryResult
			err := c.CallMethod(context.Background(), skills.MethodReadDirectory, map[string]string{"uri": uri}, &res)
			if !isCode(err, jsonrpc.CodeInvalidParams) {
				t.Errorf("%s: directory read of %q: %v", v, uri, err)
			}
		}
	}
}

// readDir reads every page of a directory: "uri mimeType;...".
func readDir(t *testing.T, c *client.Client, uri string) string {
	t.Helper()
	var out []string
	for cursor := ""; ; {
		var res skills.ReadDirectoryResult
		if err := c.CallMethod(context.Background(), skills.MethodReadDirectory, map[string]string{"uri": uri, "cursor": cursor}, &res); err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		for _, r := range res.Resources {
			out = append(out, r.URI+" "+r.MIMEType)
		}
		if cursor = res.NextCursor; cursor == "" {
			return strings.Join(out, ";")
		}
	}
}

func md(name, description string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + description + "\n---\nBody.\n")}
}

// TestAddRefuses: invalid skills are refused when added, the error
// naming the file, and nothing of them is served.
func TestAddRefuses(t *testing.T) {
	big := &fstest.MapFile{Data: make([]byte, skills.MaxTotalSize)}
	many := fstest.MapFS{"many/SKILL.md": md("many", "d")}
	for i := range skills.MaxResources {
		many["many/f/"+strings.Repeat("x", i+1)] = &fstest.MapFile{}
	}
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"no frontmatter", fstest.MapFS{"a/SKILL.md": {Data: []byte("# A\n")}}, "a/SKILL.md: SKILL.md does not begin with --- delimited YAML frontmatter"},
		{"no name", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\ndescription: d\n---\n")}}, "a/SKILL.md: frontmatter has no name"},
		{"no description", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\n---\n")}}, "a/SKILL.md: frontmatter has no description"},
		{"bad name", fstest.MapFS{"A-/SKILL.md": md("A-", "d")}, `A-/SKILL.md: name "A-" breaks the naming rules`},
		{"double hyphen", fstest.MapFS{"a--b/SKILL.md": md("a--b", "d")}, `breaks the naming rules`},
		{"name not folder", fstest.MapFS{"x/a/SKILL.md": md("b", "d")}, `x/a/SKILL.md: name "b" does not match its directory "a"`},
		{"bad yaml", fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: [x\n---\n")}}, "a/SKILL.md: frontmatter line 3: unterminated flow collection"},
		{"root", fstest.MapFS{"SKILL.md": md("a", "d")}, "SKILL.md is at the root"},
		{"link out", fstest.MapFS{"a/SKILL.md": md("a", "d"), "a/secret": {Data: []byte("../../etc/passwd"), Mode: fs.ModeSymlink}}, "a/secret is a file outside the skill"},
		{"too large", fstest.MapFS{"a/SKILL.md": md("a", "d"), "a/big": big}, "a/big: the skill's files take more than 16777216 bytes"},
		{"too many", many, "skill \"many\" has more than 512 files"},
		{"one bad of two", fstest.MapFS{"good/SKILL.md": md("good", "d"), "bad/SKILL.md": md("worse", "d")}, `bad/SKILL.md: name "worse"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
			err := skills.Serve(s, nil).AddFS(tc.fsys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("AddFS: %v, want %q", err, tc.want)
			}
			var res skills.ListResult
			c := dial(t, s, protocol.LatestVersion)
			if err := c.CallMethod(context.Background(), skills.MethodList, nil, &res); err != nil || len(res.Skills) != 0 {
				t.Errorf("listing after a refused AddFS: %+v %v", res.Skills, err)
			}
		})
	}
}

// TestAddLinkWithin: a link to a file of the same skill is served as that
// file.
func TestAddLinkWithin(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	fsys := fstest.MapFS{"a/SKILL.md": md("a", "d"), "a/x.md": {Data: []byte("x")}, "a/y.md": {Data: []byte("x.md"), Mode: fs.ModeSymlink}}
	if err := skills.Serve(s, nil).AddFS(fsys); err != nil {
		t.Fatal(err)
	}
	res, err := dial(t, s, protocol.LatestVersion).ReadResource(context.Background(), "skill://a/y.md")
	if err != nil || res.Contents[0].Text != "x" {
		t.Errorf("%+v %v", res, err)
	}
}

// TestDynamic: a dynamic skill's entry says "dynamic", its frontmatter
// and files are those of the moment, and its directories are read live.
func TestDynamic(t *testing.T) {
	fsys := fstest.MapFS{"SKILL.md": md("daily", "Today's report"), "data/today.csv": {Data: []byte("a,b\n")}}
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	sk := skills.Serve(s, nil)
	if err := sk.AddDynamic("reports/daily", fsys); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s, protocol.LatestVersion)
	fsys["SKILL.md"] = md("daily", "Tomorrow's report")
	fsys["data/later.csv"] = &fstest.MapFile{Data: []byte("c\n")}
	var res skills.GetResult
	err := c.CallMethod(context.Background(), skills.MethodGet, map[string]string{"uri": "skill://reports/daily/SKILL.md"}, &res)
	if err != nil || !res.Skill.Dynamic || res.Skill.Description() != "Tomorrow's report" {
		t.Fatalf("%+v %v", res.Skill, err)
	}
	if got, want := readDir(t, c, "skill://reports/daily/data"), "skill://reports/daily/data/later.csv text/csv;skill://reports/daily/data/today.csv text/csv"; got != want {
		t.Errorf("dir: %s, want %s", got, want)
	}
	if got, want := readDir(t, c, "skill://reports"), "skill://reports/daily inode/directory"; got != want {
		t.Errorf("dir: %s, want %s", got, want)
	}
	rr, err := c.ReadResource(context.Background(), "skill://reports/daily/data/later.csv")
	if err != nil || rr.Contents[0].Text != "c\n" {
		t.Errorf("read: %+v %v", rr, err)
	}
	if _, err := c.ReadResource(context.Background(), "skill://reports/daily/../x"); err == nil {
		t.Error("read outside the dynamic skill succeeded")
	}
	if err := sk.AddDynamic("reports/weekly", fsys); err == nil || !strings.Contains(err.Error(), `name "daily" does not match its directory "weekly"`) {
		t.Errorf("AddDynamic with the wrong name: %v", err)
	}
}

// TestRemove: a removed skill is neither listed nor readable, and the
// files a nested skill shares with its enclosing one stay.
func TestRemove(t *testing.T) {
	fsys := fstest.MapFS{"outer/SKILL.md": md("outer", "o"), "outer/inner/SKILL.md": md("inner", "i")}
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	sk := skills.Serve(s, nil)
	if err := sk.AddFS(fsys); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s, protocol.LatestVersion)
	var res skills.ListResult
	if err := c.CallMethod(context.Background(), skills.MethodList, nil, &res); err != nil || len(res.Skills) != 2 || len(res.Skills[0].Resources) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	sk.Remove("outer/inner")
	if err := c.CallMethod(context.Background(), skills.MethodList, nil, &res); err != nil || len(res.Skills) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := c.ReadResource(context.Background(), "skill://outer/inner/SKILL.md"); err != nil {
		t.Errorf("the enclosing skill's file went with the nested skill: %v", err)
	}
	sk.Remove("outer")
	if _, err := c.ReadResource(context.Background(), "skill://outer/SKILL.md"); err == nil {
		t.Error("a removed skill's file is still served")
	}
}

func dirFS(dir string) fs.FS { return os.DirFS(dir) }
