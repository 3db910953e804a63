package skills

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// index is a snapshot of what the server serves, rebuilt when skills
// change and read without locks: the sorted skill URIs and the
// directories of the skill namespace.
type index struct {
	skills []string
	byURI  map[string]*servedSkill
	dirs   map[string]map[string]protocol.Resource // directory URI -> children by URI
	live   []*servedSkill                          // dynamic skills, read live
}

// buildIndex indexes the skills served: every directory level of a
// static skill's files, up to the authority ("skill://acme"), is a
// directory resource; a dynamic skill's root is listed in its parent and
// read live.
func buildIndex(byURI map[string]*servedSkill) *index {
	ix := &index{byURI: make(map[string]*servedSkill, len(byURI)), dirs: map[string]map[string]protocol.Resource{}}
	for u, sk := range byURI {
		ix.byURI[u] = sk
		ix.skills = append(ix.skills, u)
		if sk.dynamic != nil {
			ix.live = append(ix.live, sk)
			ix.addDir(parentURI(sk.uri))
			continue
		}
		for _, r := range sk.resources {
			if other := byURI[r.URI]; other != nil {
				r = other.self // a SKILL.md has its skill's metadata, nested or not
			}
			ix.addChild(r)
		}
	}
	slices.Sort(ix.skills)
	return ix
}

// addChild records r in its directory and that directory in its parents.
func (ix *index) addChild(r *protocol.Resource) {
	dir := parentURI(r.URI)
	if dir == "" {
		return
	}
	ix.ensureDir(dir)
	ix.dirs[dir][r.URI] = *r
	ix.addDir(dir)
}

// addDir records the directory uri, in its parent and so on up.
func (ix *index) addDir(uri string) {
	ix.ensureDir(uri)
	if parentURI(uri) == "" || ix.listed(uri) {
		return
	}
	name, _ := url.PathUnescape(path.Base(uri))
	ix.addChild(&protocol.Resource{URI: uri, Name: name, MIMEType: DirectoryMIMEType})
}

func (ix *index) ensureDir(uri string) {
	if ix.dirs[uri] == nil {
		ix.dirs[uri] = map[string]protocol.Resource{}
	}
}

// listed reports whether the directory uri is a child of its parent yet.
func (ix *index) listed(uri string) bool {
	_, ok := ix.dirs[parentURI(uri)][uri]
	return ok
}

// parentURI is the directory of uri ("skill://a/b/SKILL.md" ->
// "skill://a/b"), or "" for the authority itself ("skill://a").
func parentURI(uri string) string {
	_, rest, ok := strings.Cut(uri, "://")
	i := strings.LastIndexByte(rest, '/')
	if !ok || i <= 0 {
		return ""
	}
	return uri[:len(uri)-len(rest)+i]
}

// liveSkill returns the dynamic skill whose directory holds uri, and the
// path of uri in it ("." for its root).
func (ix *index) liveSkill(uri string) (*servedSkill, string, bool) {
	for _, sk := range ix.live {
		root := parentURI(sk.uri)
		if uri == root {
			return sk, ".", true
		}
		if rest, ok := strings.CutPrefix(uri, root+"/"); ok {
			rel, err := unescapePath(rest)
			return sk, rel, err == nil && fs.ValidPath(rel)
		}
	}
	return nil, "", false
}

// readDirectory serves resources/directory/read.
func (s *Server) readDirectory(ctx context.Context, req *server.Request) (any, error) {
	var p ReadDirectoryParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	ix := s.index
	s.mu.RUnlock()
	children, err := ix.children(p.URI)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(children))
	for k := range children {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	uris, next, err := page(keys, p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	res := &ReadDirectoryResult{Resources: make([]protocol.Resource, len(uris)), NextCursor: next}
	for i, u := range uris {
		res.Resources[i] = children[u]
	}
	if req.Stateless() {
		res.ResultType, res.Meta = protocol.ResultComplete, s.meta
	}
	return res, nil
}

// children returns the direct children of the directory uri, or the
// invalid-params error the specification asks for.
func (ix *index) children(uri string) (map[string]protocol.Resource, error) {
	if sk, rel, ok := ix.liveSkill(uri); sk != nil {
		if !ok {
			return nil, notDirectory(uri)
		}
		return liveChildren(sk, uri, rel)
	}
	if c, ok := ix.dirs[uri]; ok {
		return c, nil
	}
	return nil, notDirectory(uri)
}

func notDirectory(uri string) error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%s is not a directory resource", uri)
}

// liveChildren reads a directory of a dynamic skill.
func liveChildren(sk *servedSkill, uri, rel string) (map[string]protocol.Resource, error) {
	entries, err := fs.ReadDir(sk.dynamic, rel)
	if errors.Is(err, fs.ErrNotExist) || err != nil && !errors.Is(err, fs.ErrPermission) {
		return nil, notDirectory(uri)
	}
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "reading %s: %v", uri, err)
	}
	out := make(map[string]protocol.Resource, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		u := uri + "/" + escapePath(e.Name())
		r := protocol.Resource{URI: u, Name: e.Name(), MIMEType: DirectoryMIMEType}
		if !e.IsDir() {
			r.MIMEType = mimeFor(u, nil)
		}
		out[u] = r
	}
	return out, nil
}

// skillRoot is the URI of a skill's directory: skill:// and its path, the
// first segment (the authority) escaped as a reg-name, the others as path
// segments.
func skillRoot(skillPath string) string {
	segs := strings.Split(skillPath, "/")
	segs[0] = escapeRegName(segs[0])
	for i := 1; i < len(segs); i++ {
		segs[i] = url.PathEscape(segs[i])
	}
	return "skill://" + strings.Join(segs, "/")
}

// escapePath escapes each segment of a "/"-separated path for a URI.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func unescapePath(p string) (string, error) { return url.PathUnescape(p) }

// escapeRegName percent-encodes what RFC 3986 does not allow in a
// reg-name (unreserved and sub-delims characters stay).
func escapeRegName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (isAlnum(c) || strings.IndexByte("-._~!$&'()*+,;=", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hexByte(c)))
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
