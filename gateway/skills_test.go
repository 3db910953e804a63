package gateway

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// skillDirs are the skills each upstream of the skills tests serves: both
// publish pdf-processing and acme/billing/refunds, with different
// content, at the same URIs.
var skillDirs = map[string]string{
	"a": "../skills/testdata/catalog",
	"b": "../cmd/ferry/testdata/skills",
}

// skillServer serves the skills of skillDirs[name] over Streamable HTTP,
// statelessly when stateless is set.
func skillServer(t *testing.T, name string, stateless bool) *config.Server {
	cfg, _ := skillServerOf(t, name, stateless)
	return cfg
}

// skillServerOf is skillServer, and the server it runs.
func skillServerOf(t *testing.T, name string, stateless bool) (*config.Server, *server.Server) {
	s := server.New(protocol.Implementation{Name: name, Version: "1.0.0"}, nil)
	if err := skills.Serve(s, nil).AddFS(os.DirFS(skillDirs[name])); err != nil {
		t.Fatal(err)
	}
	h := streamablehandler.New(s, &streamablehandler.Options{DisableSessions: stateless})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return &config.Server{Name: name, Transport: config.HTTP, URL: ts.URL + "/mcp"}, s
}

// listSkills returns every skill entry of c's endpoint.
func listSkills(t *testing.T, ctx context.Context, sc *skills.Client) []skills.Skill {
	t.Helper()
	if !sc.Supported() || !sc.DirectoryRead() {
		t.Fatal("the endpoint does not declare the skills extension with directoryRead")
	}
	var out []skills.Skill
	for s, err := range sc.Skills(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// loadAll loads every skill and reads each of its files, which the
// client verifies against the manifest, and checks that the bytes are
// those of the server prefix names (the server's own directory on disk).
func loadAll(t *testing.T, ctx context.Context, sc *skills.Client, entries []skills.Skill, server func(uri string) (name, rel string)) {
	t.Helper()
	for _, e := range entries {
		l, err := sc.Load(ctx, &e)
		if err != nil {
			t.Fatalf("Load %s: %v", e.URI, err)
		}
		for _, r := range e.Resources {
			data, err := l.ReadFile(ctx, r.URI)
			if err != nil {
				t.Fatalf("ReadFile %s: %v", r.URI, err)
			}
			name, rel := server(r.URI)
			want, err := os.ReadFile(filepath.Join(skillDirs[name], filepath.FromSlash(rel)))
			if err != nil || string(data) != string(want) {
				t.Errorf("%s: read %q, want server %s's %s (%v)", r.URI, data, name, rel, err)
			}
		}
	}
}

func uris(entries []skills.Skill) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.URI)
	}
	slices.Sort(out)
	return out
}

// On the aggregated endpoint the skills of every server are listed, each
// server's URIs under its name, so that the same skill path on two
// servers gives two skills, each read from its own server and verified
// against its own, unchanged, manifest; a server's own endpoint shows its
// skills as the server does.
func TestSkillsAggregatedAndOwn(t *testing.T) {
	_, url := start(t, []*config.Server{skillServer(t, "a", false), skillServer(t, "b", true)}, nil)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			own := map[string]skills.Skill{} // by server and upstream URI
			for name := range skillDirs {
				sc := skills.NewClient(connect(t, url+"/servers/"+name+"/mcp", era.version, nil))
				entries := listSkills(t, ctx, sc)
				want := []string{"skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"}
				if got := uris(entries); !slices.Equal(got, want) {
					t.Fatalf("/servers/%s: skills %q, want %q", name, got, want)
				}
				loadAll(t, ctx, sc, entries, func(uri string) (string, string) {
					return name, strings.TrimPrefix(uri, "skill://")
				})
				for _, e := range entries {
					own[name+" "+e.URI] = e
				}
			}

			c := connect(t, url+"/mcp", era.version, nil)
			sc := skills.NewClient(c)
			entries := listSkills(t, ctx, sc)
			want := []string{"skill://a/acme/billing/refunds/SKILL.md", "skill://a/pdf-processing/SKILL.md",
				"skill://b/acme/billing/refunds/SKILL.md", "skill://b/pdf-processing/SKILL.md"}
			if got := uris(entries); !slices.Equal(got, want) {
				t.Fatalf("/mcp: skills %q, want %q", got, want)
			}
			for _, e := range entries {
				name, upURI := splitServer(e.URI)
				o := own[name+" "+upURI]
				if e.Name() != o.Name() || e.Description() != o.Description() || len(e.Resources) != len(o.Resources) {
					t.Fatalf("%s: entry %+v, server %s's %+v", e.URI, e, name, o)
				}
				for i, r := range e.Resources {
					n, u := splitServer(r.URI)
					if n != name || u != o.Resources[i].URI || r.Digest != o.Resources[i].Digest || r.Size != o.Resources[i].Size {
						t.Errorf("%s: resource %+v, server's %+v", e.URI, r, o.Resources[i])
					}
				}
			}
			loadAll(t, ctx, sc, entries, func(uri string) (string, string) {
				name, upURI := splitServer(uri)
				return name, strings.TrimPrefix(upURI, "skill://")
			})

			got, err := sc.Get(ctx, "skill://b/acme/billing/refunds/SKILL.md")
			ownRefunds := own["b skill://acme/billing/refunds/SKILL.md"]
			if err != nil || got.URI != "skill://b/acme/billing/refunds/SKILL.md" || got.Description() != ownRefunds.Description() {
				t.Errorf("skills/get: %+v, %v", got, err)
			}
			dir, err := sc.ReadDirectory(ctx, "skill://a/pdf-processing/templates", "")
			var children []string
			for _, r := range dir.Resources {
				children = append(children, r.URI+" "+r.MIMEType)
			}
			slices.Sort(children)
			wantChildren := []string{"skill://a/pdf-processing/templates/invoice.md text/markdown",
				"skill://a/pdf-processing/templates/regional " + skills.DirectoryMIMEType}
			if err != nil || !slices.Equal(children, wantChildren) {
				t.Errorf("resources/directory/read: %q, %v; want %q", children, err, wantChildren)
			}

			var listed []string
			for r, err := range c.Resources(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, r.URI)
			}
			for _, u := range want {
				if !slices.Contains(listed, u) {
					t.Errorf("resources/list has no %s: %q", u, listed)
				}
			}
		})
	}
}

// splitServer splits an aggregated skill:// URI into the server it names
// and the server's URI.
func splitServer(uri string) (name, upURI string) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(uri, "skill://"), "/")
	return name, "skill://" + rest
}

// A skill URI of the aggregated endpoint names its server: one without a
// server, or naming none the gateway has, is not found, in either era and
// whichever method asks: invalid params for the extension's methods (as
// its specification asks), the era's resource-not-found for
// resources/read.
func TestSkillsUnknownServer(t *testing.T) {
	_, url := start(t, []*config.Server{skillServer(t, "a", false)}, nil)
	tests := []struct{ name, uri string }{
		{"no server", "skill://pdf-processing/SKILL.md"},
		{"unknown server", "skill://zz/pdf-processing/SKILL.md"},
		{"bare server", "skill://a"},
	}
	notFound := map[string]int64{"legacy": protocol.CodeResourceNotFound, "stateless": jsonrpc.CodeInvalidParams}
	for _, era := range eras {
		c := connect(t, url+"/mcp", era.version, nil)
		sc := skills.NewClient(c)
		for _, tc := range tests {
			t.Run(era.name+"/"+tc.name, func(t *testing.T) {
				ctx := ctxT(t)
				_, err := c.ReadResource(ctx, tc.uri)
				wantCode(t, "resources/read", err, notFound[era.name])
				_, err = sc.Get(ctx, tc.uri)
				wantCode(t, "skills/get", err, jsonrpc.CodeInvalidParams)
				_, err = sc.ReadDirectory(ctx, tc.uri, "")
				wantCode(t, "resources/directory/read", err, jsonrpc.CodeInvalidParams)
			})
		}
	}
}

// A client of the aggregated endpoint subscribes to a skill file under
// the URI it sees: the subscription goes to the server that URI names,
// under the server's URI, and the server's updates come back under the
// client's.
func TestSkillSubscriptions(t *testing.T) {
	a, srvA := skillServerOf(t, "a", false)
	b, srvB := skillServerOf(t, "b", true)
	_, url := start(t, []*config.Server{a, b}, nil)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			updated := make(chan string, 10)
			c := connect(t, url+"/mcp", era.version, &client.Options{OnResourceUpdated: func(uri string) { updated <- uri }})
			for _, name := range []string{"a", "b"} {
				unsub, err := c.Subscribe(ctx, "skill://"+name+"/pdf-processing/SKILL.md")
				if err != nil {
					t.Fatalf("subscribe %s: %v", name, err)
				}
				defer unsub(ctx)
			}
			for _, tc := range []struct {
				srv  *server.Server
				want string
			}{{srvB, "skill://b/pdf-processing/SKILL.md"}, {srvA, "skill://a/pdf-processing/SKILL.md"}} {
				tc.srv.ResourceUpdated(ctx, "skill://pdf-processing/SKILL.md")
				select {
				case uri := <-updated:
					if uri != tc.want {
						t.Errorf("update of %s, want %s", uri, tc.want)
					}
				case <-ctx.Done():
					t.Fatalf("no update of %s", tc.want)
				}
			}
		})
	}
}

func wantCode(t *testing.T, method string, err error, code int64) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != code {
		t.Errorf("%s: %v, want error code %d", method, err, code)
	}
}

// The extension's results in the stateless era carry what every result
// does (resultType, the server's identity) and skills/list and skills/get
// the caching hints, which the endpoint's server adds only to the base
// protocol's results.
func TestSkillsStatelessResultFields(t *testing.T) {
	_, url := start(t, []*config.Server{skillServer(t, "a", true)}, nil)
	tests := []struct {
		method string
		params any
		cache  bool
	}{
		{skills.MethodList, &skills.ListParams{}, true},
		{skills.MethodGet, &skills.GetParams{URI: "skill://a/pdf-processing/SKILL.md"}, true},
		{skills.MethodReadDirectory, &skills.ReadDirectoryParams{URI: "skill://a/pdf-processing"}, false},
	}
	c := connect(t, url+"/mcp", protocol.Version20260728, nil)
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			var res map[string]any
			if err := c.CallMethod(ctxT(t), tc.method, tc.params, &res); err != nil {
				t.Fatal(err)
			}
			meta, _ := res["_meta"].(map[string]any)
			if res["resultType"] != "complete" || meta[protocol.MetaServerInfo] == nil {
				t.Errorf("resultType %v, _meta %v", res["resultType"], res["_meta"])
			}
			if _, ttl := res["ttlMs"]; tc.cache && (!ttl || res["cacheScope"] == nil) {
				t.Errorf("caching hints missing: ttlMs %v, cacheScope %v", res["ttlMs"], res["cacheScope"])
			}
		})
	}
}
