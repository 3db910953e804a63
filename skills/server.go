package skills

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// Options configure a skills [Server]. The zero value is usable.
type Options struct {
	// TTL is the ttlMs hint of skills/list and skills/get results (sent
	// to clients of 2026-07-28 and later). Zero sends ttlMs 0.
	TTL time.Duration
	// CacheScope of those results: protocol.CachePublic (the default:
	// every client is served the same skills) or protocol.CachePrivate.
	CacheScope string
	// PageSize is the most entries a skills/list page, and the most
	// children a resources/directory/read page, holds. Zero means 100.
	PageSize int
}

// Server serves skills on an MCP server (see [Serve]).
type Server struct {
	srv   *server.Server
	opts  Options
	meta  protocol.Meta // {"io.modelcontextprotocol/serverInfo": ...}
	mu    sync.RWMutex
	byURI map[string]*servedSkill // by the URI of SKILL.md
	index *index                  // rebuilt on every change
}

// servedSkill is one skill the server serves.
type servedSkill struct {
	path      string
	uri       string               // of SKILL.md
	self      *protocol.Resource   // SKILL.md's resource
	entry     jsontext.Value       // the encoded entry (static skills)
	resources []*protocol.Resource // of its files (static skills), SKILL.md among them
	data      [][]byte             // the content of each of resources
	dynamic   fs.FS                // the skill's live files, for a dynamic skill
	tmpl      string               // its resource template (dynamic)
}

// Serve declares the Skills extension on srv, with directoryRead, and
// serves its methods there: skills/list, skills/get and
// resources/directory/read. Add skills to the returned Server. The files
// of skills are resources of srv, so srv declares the resources
// capability once one is added. opts may be nil.
func Serve(srv *server.Server, opts *Options) *Server {
	s := &Server{srv: srv, byURI: map[string]*servedSkill{}, index: &index{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = 100
	}
	if s.opts.CacheScope == "" {
		s.opts.CacheScope = protocol.CachePublic
	}
	s.meta = protocol.Meta{protocol.MetaServerInfo: srv.Implementation()}
	srv.HandleMethod(MethodList, s.list)
	srv.HandleMethod(MethodGet, s.get)
	srv.HandleMethod(MethodReadDirectory, s.readDirectory)
	srv.DeclareExtension(Extension, map[string]any{"directoryRead": true})
	return s
}

// AddFS adds every skill of fsys: each directory holding a SKILL.md is a
// skill, at the skill path of its directory ("git-workflow",
// "acme/billing/refunds": the URI of its SKILL.md is then
// skill://acme/billing/refunds/SKILL.md). Skills may nest. Files and
// directories whose names start with "." are left out. A SKILL.md at the
// root of fsys is refused: a skill's directory carries its name (use
// [Server.Add]).
//
// Every skill is checked before any is served: an invalid one (a
// frontmatter without name or description, a name that breaks the naming
// rules or differs from its directory, a link leading out of the skill,
// more than [MaxResources] files or [MaxTotalSize] bytes) makes AddFS
// return an error naming each file at fault, and add nothing.
func (s *Server) AddFS(fsys fs.FS) error {
	dirs, err := skillDirs(fsys)
	if err != nil {
		return err
	}
	var skills []*loaded
	var errs []error
	for _, dir := range dirs {
		l, err := readSkill(fsys, dir, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		skills = append(skills, l)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	s.publish(skills...)
	return nil
}

// Add adds one skill: fsys holds its files, SKILL.md at the root, and
// skillPath locates it, its final segment the skill's name
// ("acme/billing/refunds"). It is checked as [Server.AddFS] checks skills.
// A skill already at skillPath is replaced.
func (s *Server) Add(skillPath string, fsys fs.FS) error {
	l, err := readSkill(fsys, skillPath, ".")
	if err != nil {
		return err
	}
	s.publish(l)
	return nil
}

// AddDynamic adds a skill whose content is generated: fsys is read at
// every request (a SKILL.md and whatever files it lists), so its entry
// publishes no digests (resources: "dynamic"), its frontmatter is read
// from the SKILL.md of the moment, and its directories are read live.
// The SKILL.md is checked now as [Server.Add] checks it.
func (s *Server) AddDynamic(skillPath string, fsys fs.FS) error {
	if err := checkSkillPath(skillPath); err != nil {
		return err
	}
	data, err := readLimited(fsys, SkillFile, MaxTotalSize)
	if err != nil {
		return fmt.Errorf("skills: skill %q: %w", skillPath, err)
	}
	fm, err := checkFrontmatter(data, path.Base(skillPath))
	if err != nil {
		return fmt.Errorf("skills: %s/%s: %w", skillPath, SkillFile, err)
	}
	uri := skillRoot(skillPath) + "/" + SkillFile
	sk := &servedSkill{path: skillPath, uri: uri, self: skillResource(uri, fm, nil), dynamic: fsys, tmpl: skillRoot(skillPath) + "/{+file}"}
	s.replace(sk)
	s.srv.AddResource(sk.self, s.readDynamic(sk))
	s.srv.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: sk.tmpl, Name: path.Base(skillPath) + " files",
		Description: "The files of the dynamic skill " + skillPath}, s.readDynamic(sk))
	return nil
}

// Remove stops serving the skills at the given skill paths.
func (s *Server) Remove(skillPaths ...string) {
	for _, p := range skillPaths {
		s.mu.RLock()
		old := s.byURI[skillRoot(p)+"/"+SkillFile]
		s.mu.RUnlock()
		if old != nil {
			s.unpublish(old)
		}
	}
}

// skillDirs returns the directories of fsys that hold a SKILL.md.
func skillDirs(fsys fs.FS) ([]string, error) {
	var dirs []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return fmt.Errorf("skills: %w", err)
		case p != "." && strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return fs.SkipDir
			}
		case d.Name() == SkillFile && !d.IsDir():
			if path.Dir(p) == "." {
				return fmt.Errorf("skills: %s is at the root: a skill is a directory named after it", p)
			}
			dirs = append(dirs, path.Dir(p))
		}
		return nil
	})
	return dirs, err
}

// publish serves loaded skills: their files as resources, their entries
// in the listing.
func (s *Server) publish(skills ...*loaded) {
	for _, l := range skills {
		sk := served(l)
		s.replace(sk)
		for i, r := range sk.resources {
			s.mu.RLock()
			if owner := s.byURI[r.URI]; owner != nil {
				r = owner.self // a SKILL.md has its skill's metadata, nested or not
			}
			s.mu.RUnlock()
			s.srv.AddResource(r, staticRead(r.URI, r.MIMEType, sk.data[i]))
		}
	}
}

// served builds the served form of a loaded skill: its encoded entry and
// its resources.
func served(l *loaded) *servedSkill {
	root := skillRoot(l.path)
	sk := &servedSkill{path: l.path, uri: root + "/" + SkillFile}
	entry := Skill{URI: sk.uri, Frontmatter: l.frontmatter, Resources: make([]Resource, len(l.files))}
	for i, f := range l.files {
		uri := root + "/" + escapePath(f.rel)
		entry.Resources[i] = Resource{URI: uri, Digest: f.digest, Size: int64(len(f.data))}
		r := fileResource(uri, f, l.frontmatter)
		if f.rel == SkillFile {
			sk.self = r
		}
		sk.resources = append(sk.resources, r)
		sk.data = append(sk.data, f.data)
	}
	sk.entry, _ = entry.MarshalJSON() // the frontmatter came from YAML: it encodes
	return sk
}

// replace records sk, removing the resources of the skill it replaces,
// and rebuilds the index.
func (s *Server) replace(sk *servedSkill) {
	s.mu.Lock()
	old := s.byURI[sk.uri]
	s.byURI[sk.uri] = sk
	s.index = buildIndex(s.byURI)
	s.mu.Unlock()
	if old != nil {
		s.removeResources(old)
	}
}

func (s *Server) unpublish(sk *servedSkill) {
	s.mu.Lock()
	if s.byURI[sk.uri] != sk {
		s.mu.Unlock()
		return
	}
	delete(s.byURI, sk.uri)
	s.index = buildIndex(s.byURI)
	s.mu.Unlock()
	s.removeResources(sk)
}

// removeResources removes the resources and template of old that no
// skill served now has (an enclosing and a nested skill share files).
func (s *Server) removeResources(old *servedSkill) {
	s.mu.RLock()
	keep := map[string]bool{}
	for _, sk := range s.byURI {
		keep[sk.uri], keep[sk.tmpl] = true, true
		for _, r := range sk.resources {
			keep[r.URI] = true
		}
	}
	s.mu.RUnlock()
	var gone []string
	for _, r := range append(slices.Clone(old.resources), old.self) {
		if !keep[r.URI] {
			gone = append(gone, r.URI)
		}
	}
	s.srv.RemoveResources(gone...)
	if old.tmpl != "" && !keep[old.tmpl] {
		s.srv.RemoveResourceTemplates(old.tmpl)
	}
}

// fileResource is the resource of a skill's file: SKILL.md carries the
// skill's name and description.
func fileResource(uri string, f file, fm map[string]any) *protocol.Resource {
	if f.rel == SkillFile {
		return skillResource(uri, fm, f.data)
	}
	return &protocol.Resource{URI: uri, Name: path.Base(f.rel), MIMEType: mimeType(f.rel, f.data), Size: int64(len(f.data))}
}

func skillResource(uri string, fm map[string]any, data []byte) *protocol.Resource {
	name, _ := fm["name"].(string)
	desc, _ := fm["description"].(string)
	return &protocol.Resource{URI: uri, Name: name, Description: desc, MIMEType: "text/markdown", Size: int64(len(data))}
}

// textTypes are the types of the files skills usually hold, whatever the
// machine's MIME tables say.
var textTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
	".py": "text/x-python", ".sh": "text/x-shellscript", ".js": "text/javascript",
	".ts": "text/x-typescript", ".json": "application/json", ".yaml": "application/yaml",
	".yml": "application/yaml", ".html": "text/html", ".csv": "text/csv", ".xml": "application/xml",
}

func mimeType(name string, data []byte) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := textTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	if utf8.Valid(data) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// contents is a file's content as resources/read returns it: text when
// it is UTF-8, else base64 (the digest covers the raw bytes either way).
func contents(uri, mimeType string, data []byte) protocol.ResourceContents {
	if utf8.Valid(data) {
		return protocol.ResourceContents{URI: uri, MIMEType: mimeType, Text: string(data)}
	}
	return protocol.ResourceContents{URI: uri, MIMEType: mimeType, Blob: base64.StdEncoding.EncodeToString(data)}
}

func staticRead(uri, mimeType string, data []byte) server.ResourceHandler {
	res := &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{contents(uri, mimeType, data)}}
	return func(ctx context.Context, req *server.Request, _ string) (*protocol.ReadResourceResult, error) {
		return res, nil
	}
}

// mimeFor is the mimeType of the file at uri.
func mimeFor(uri string, data []byte) string {
	if strings.HasSuffix(uri, "/"+SkillFile) {
		return "text/markdown"
	}
	return mimeType(uri, data)
}

// readDynamic reads a file of a dynamic skill from its fs.FS.
func (s *Server) readDynamic(sk *servedSkill) server.ResourceHandler {
	root := strings.TrimSuffix(sk.uri, SkillFile)
	return func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		rel, err := unescapePath(strings.TrimPrefix(uri, root))
		if err != nil || !strings.HasPrefix(uri, root) || !fs.ValidPath(rel) {
			return nil, server.ErrResourceNotFound
		}
		data, err := readLimited(sk.dynamic, rel, MaxTotalSize)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			return nil, server.ErrResourceNotFound
		}
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "reading %s: %v", uri, err)
		}
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{contents(uri, mimeFor(uri, data), data)}}, nil
	}
}

// list serves skills/list.
func (s *Server) list(ctx context.Context, req *server.Request) (any, error) {
	var p ListParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	ix := s.index
	s.mu.RUnlock()
	uris, next, err := page(ix.skills, p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	res := &listWire{Skills: make([]jsontext.Value, 0, len(uris)), NextCursor: next}
	for _, u := range uris {
		e, err := s.entry(ix.byURI[u])
		if err != nil {
			req.ClientLog().Warn("skills: a dynamic skill is left out of the listing", "uri", u, "error", err)
			continue
		}
		res.Skills = append(res.Skills, e)
	}
	s.stamp(req, &res.ResultFields, &res.CacheFields)
	return res, nil
}

// get serves skills/get.
func (s *Server) get(ctx context.Context, req *server.Request) (any, error) {
	var p GetParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	sk := s.byURI[p.URI]
	s.mu.RUnlock()
	if sk == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "No skill is served at %s", p.URI)
	}
	e, err := s.entry(sk)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "skill %s: %v", p.URI, err)
	}
	res := &getWire{Skill: e}
	s.stamp(req, &res.ResultFields, &res.CacheFields)
	return res, nil
}

// entry returns the encoded entry of a skill; a dynamic skill's is made
// from its SKILL.md of the moment.
func (s *Server) entry(sk *servedSkill) (jsontext.Value, error) {
	if sk.dynamic == nil {
		return sk.entry, nil
	}
	data, err := readLimited(sk.dynamic, SkillFile, MaxTotalSize)
	if err != nil {
		return nil, err
	}
	fm, err := checkFrontmatter(data, path.Base(sk.path))
	if err != nil {
		return nil, err
	}
	return Skill{URI: sk.uri, Frontmatter: fm, Dynamic: true}.MarshalJSON()
}

// stamp adds what a result of the stateless era carries: resultType, the
// caching hints and the server's identity.
func (s *Server) stamp(req *server.Request, rf *protocol.ResultFields, cf *protocol.CacheFields) {
	if !req.Stateless() {
		return
	}
	ttl := s.opts.TTL.Milliseconds()
	rf.ResultType, rf.Meta = protocol.ResultComplete, s.meta
	cf.TTLMs, cf.CacheScope = &ttl, s.opts.CacheScope
}

// listWire and getWire are the results the server sends, with entries
// encoded once when their skill was added.
type listWire struct {
	protocol.ResultFields
	protocol.CacheFields
	Skills     []jsontext.Value `json:"skills"`
	NextCursor protocol.Cursor  `json:"nextCursor,omitempty"`
}

type getWire struct {
	protocol.ResultFields
	protocol.CacheFields
	Skill jsontext.Value `json:"skill"`
}

// decodeParams decodes a request's params (absent ones as an empty
// object), reporting problems as invalid params.
func decodeParams(params jsontext.Value, out any) error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, out); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

// page returns up to size of the sorted keys after the cursor (the last
// key of the previous page, base64url), and the next page's cursor.
func page(keys []string, cursor string, size int) ([]string, string, error) {
	start := 0
	if cursor != "" {
		last, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q", cursor)
		}
		start, _ = slices.BinarySearch(keys, string(last))
		if start < len(keys) && keys[start] == string(last) {
			start++
		}
	}
	end := min(start+size, len(keys))
	next := ""
	if end < len(keys) {
		next = base64.RawURLEncoding.EncodeToString([]byte(keys[end-1]))
	}
	return keys[start:end], next, nil
}
