package gateway

import (
	"context"
	"strings"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
)

// The Skills extension (SEP-2640) through the gateway. A skill URI is
// scoped to the server that serves it: two servers may both serve
// skill://refunds/SKILL.md, two unrelated skills. On the aggregated
// endpoint a skill:// URI of upstream NAME is therefore shown as
// skill://NAME/...: the server's label becomes the first segment of the
// skill path, so that same URIs stay apart, a name two servers publish is
// told apart by that segment (the specification's per-origin namespace;
// the frontmatter, name included, is the author's and passes verbatim),
// and a request names the server it goes to. Digests and sizes cover the
// files' bytes, which pass unchanged, so clients still verify. A server's
// own endpoint passes everything through unchanged.

const skillScheme = "skill://"

// declareSkills declares the extension on f: the gateway serves its
// methods on every endpoint, routing each to the server that owns the
// URI (a server without the extension lists no skills).
func declareSkills(f *front) {
	f.srv.DeclareExtension(skills.Extension, map[string]any{"directoryRead": true})
}

// outward is the URI f's clients see for uri of upstream u.
func (f *front) outward(u *upstream, uri string) string {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if f.only != nil || !ok {
		return uri
	}
	return skillScheme + u.name + "/" + rest
}

// inward undoes outward: for a skill:// URI of the aggregated endpoint
// (isSkill), the upstream its first segment names, nil when none, and
// that upstream's URI.
func (f *front) inward(uri string) (u *upstream, upURI string, isSkill bool) {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if f.only != nil || !ok {
		return nil, uri, false
	}
	name, tail, _ := strings.Cut(rest, "/")
	if tail == "" {
		return nil, uri, true
	}
	return f.g.upstream(name), skillScheme + tail, true
}

// outwardSkill is entry as f's clients see it: its URIs outward, its
// frontmatter, digests and sizes as they are.
func (f *front) outwardSkill(u *upstream, entry skills.Skill) skills.Skill {
	entry.URI = f.outward(u, entry.URI)
	if entry.Resources != nil {
		res := make([]skills.Resource, len(entry.Resources))
		for i, r := range entry.Resources {
			r.URI = f.outward(u, r.URI)
			res[i] = r
		}
		entry.Resources = res
	}
	return entry
}

// skillsMethod serves skills/list, skills/get and resources/directory/read.
func (f *front) skillsMethod(ctx context.Context, req *server.Request) (any, error) {
	switch req.Method {
	case skills.MethodList:
		return page(f, req, f.skillCatalog(ctx, req), func(items []skills.Skill, next string) any {
			res := &skills.ListResult{Skills: items, NextCursor: next}
			f.stamp(req, &res.ResultFields, &res.CacheFields)
			return res
		})
	case skills.MethodGet:
		return f.getSkill(ctx, req)
	}
	return f.readDirectory(ctx, req)
}

// skillCatalog lists the skills of every upstream that declares the
// extension, in configuration order, their URIs outward. A server that
// fails is left out (and logged), as in the other lists.
func (f *front) skillCatalog(ctx context.Context, req *server.Request) *catalog[skills.Skill] {
	ups := f.upstreams()
	lists, errs := gather(ctx, req, ups, (*link).skills)
	c := &catalog[skills.Skill]{}
	for i, u := range ups {
		if errs[i] != nil {
			f.g.log.Warn("gateway: listing skills failed", "server", u.name, "error", errs[i])
			c.problems = append(c.problems, errs[i])
			continue
		}
		for _, s := range lists[i] {
			c.items = append(c.items, f.outwardSkill(u, s))
		}
	}
	return c
}

// skills lists every skill of the link's server; none when it does not
// declare the extension.
func (l *link) skills(ctx context.Context) ([]skills.Skill, error) {
	c, err := l.client(ctx)
	if err != nil {
		return nil, err
	}
	sc := skills.NewClient(c)
	if !sc.Supported() {
		return nil, nil
	}
	var out []skills.Skill
	for s, err := range sc.Skills(ctx) {
		if err != nil {
			return nil, upstreamError(l.up.name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// skillRoute finds the upstream of a skill or skill directory URI and its
// URI there: a skill:// URI names its server; another scheme's belongs to
// the first server listing a skill at or above it.
func (f *front) skillRoute(ctx context.Context, req *server.Request, uri string) (*upstream, string, error) {
	u, upURI, err := f.route(ctx, req, uri, func() *upstream {
		ups := f.upstreams()
		lists, _ := gather(ctx, req, ups, (*link).skills)
		for i, u := range ups {
			for _, s := range lists[i] {
				root := strings.TrimSuffix(s.URI, "/"+skills.SkillFile)
				if uri == s.URI || uri == root || strings.HasPrefix(uri, root+"/") {
					return u
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", noSkill(uri)
	}
	return u, upURI, nil
}

// noSkill is the error for a URI no skill or skill directory is at: invalid
// params in both eras, as the extension's methods answer it.
func noSkill(uri string) error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "no skill is served at %s", uri)
}

// resourceRoute finds the upstream of a resource and its URI there:
// skill:// URIs by the server they name, others as owner finds them.
func (f *front) resourceRoute(ctx context.Context, req *server.Request, uri string) (*upstream, string, error) {
	if _, _, isSkill := f.inward(uri); !isSkill {
		u, err := f.owner(ctx, req, uri)
		return u, uri, err
	}
	return f.route(ctx, req, uri, nil)
}

// route finds the upstream of uri and its URI there: a server's own
// endpoint's upstream, the server a skill:// URI names, else the one
// other finds.
func (f *front) route(ctx context.Context, req *server.Request, uri string, other func() *upstream) (*upstream, string, error) {
	u, upURI, isSkill := f.inward(uri)
	switch {
	case f.only != nil:
		u = f.only
	case !isSkill && other != nil:
		u = other()
	}
	if u == nil {
		return nil, "", notFound(req, uri)
	}
	return u, upURI, nil
}

// skillCall runs one request of the extension on the upstream of uri,
// whose client must declare the extension.
func (f *front) skillCall(ctx context.Context, req *server.Request, uri string,
	run func(ctx context.Context, sc *skills.Client, u *upstream, upURI string) (any, error)) (any, error) {
	u, upURI, err := f.skillRoute(ctx, req, uri)
	if err != nil {
		return nil, err
	}
	l, err := u.linkFor(ctx, req)
	if err != nil {
		return nil, err
	}
	return f.forwardValue(ctx, req, l, kind{req.Method, upURI}, protocol.MRTRParams{}, func(ctx context.Context, c *client.Client) (any, error) {
		sc := skills.NewClient(c)
		if !sc.Supported() {
			return nil, noSkill(uri)
		}
		return run(ctx, sc, u, upURI)
	})
}

func (f *front) getSkill(ctx context.Context, req *server.Request) (any, error) {
	var p skills.GetParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	return f.skillCall(ctx, req, p.URI, func(ctx context.Context, sc *skills.Client, u *upstream, upURI string) (any, error) {
		s, err := sc.Get(ctx, upURI)
		if err != nil {
			return nil, err
		}
		res := &skills.GetResult{Skill: f.outwardSkill(u, *s)}
		f.stamp(req, &res.ResultFields, &res.CacheFields)
		return res, nil
	})
}

func (f *front) readDirectory(ctx context.Context, req *server.Request) (any, error) {
	var p skills.ReadDirectoryParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	return f.skillCall(ctx, req, p.URI, func(ctx context.Context, sc *skills.Client, u *upstream, upURI string) (any, error) {
		if !sc.DirectoryRead() {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "upstream %q does not serve %s", u.name, skills.MethodReadDirectory)
		}
		res, err := sc.ReadDirectory(ctx, upURI, string(p.Cursor))
		if err != nil {
			return nil, err
		}
		out := &skills.ReadDirectoryResult{Resources: make([]protocol.Resource, len(res.Resources)), NextCursor: res.NextCursor}
		for i, r := range res.Resources {
			r.URI = f.outward(u, r.URI)
			out.Resources[i] = r
		}
		f.stamp(req, &out.ResultFields, nil)
		return out, nil
	})
}

// stamp adds what a result of the stateless era carries, which the
// endpoint's server adds only to the results of the base protocol:
// resultType, the gateway's identity and, for skills/list and skills/get,
// caching hints. The gateway keeps no skill entries (they are the
// servers' to change), so ttlMs is 0; the scope is private when a server
// runs a process per client, whose skills may be that client's own.
func (f *front) stamp(req *server.Request, rf *protocol.ResultFields, cf *protocol.CacheFields) {
	if !req.Stateless() {
		return
	}
	rf.ResultType = protocol.ResultComplete
	rf.Meta = protocol.Meta{protocol.MetaServerInfo: f.g.impl}
	if cf == nil {
		return
	}
	var zero int64
	cf.TTLMs, cf.CacheScope = &zero, protocol.CachePublic
	if !f.cacheable(req) {
		cf.CacheScope = protocol.CachePrivate
	}
}
