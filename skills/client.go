package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
)

// ErrNotSupported reports a server that does not declare the extension
// (or, for [Client.ReadDirectory], its directoryRead setting).
var ErrNotSupported = errors.New("skills: the server does not declare the skills extension")

// ErrVerification is matched (errors.Is) by every [*VerifyError].
var ErrVerification = errors.New("skill verification failed")

// Failure says what a [VerifyError] found.
type Failure int

// The verification failures: each means the content must not be used.
const (
	DigestMismatch      Failure = iota + 1 // the content does not hash to the manifest's digest
	SizeMismatch                           // its length is not the manifest's size
	FrontmatterMismatch                    // SKILL.md's frontmatter differs from the entry's
	Unlisted                               // the file is not in the manifest the skill was loaded under
	OverLimit                              // the skill exceeds MaxResources or MaxTotalSize
	InvalidEntry                           // the entry breaks the specification (host MUST NOT load it)
)

var failureNames = map[Failure]string{DigestMismatch: "digest mismatch", SizeMismatch: "size mismatch",
	FrontmatterMismatch: "frontmatter mismatch", Unlisted: "file not in the manifest", OverLimit: "over the limits",
	InvalidEntry: "invalid entry"}

func (f Failure) String() string { return failureNames[f] }

// VerifyError reports content that does not match the skill's entry: the
// host must not use it. Refreshing the entry ([Client.Get]) and loading
// the skill again recovers from a skill that changed since it was listed.
type VerifyError struct {
	URI     string
	Failure Failure
	Detail  string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("skill verification failed: %s: %s: %s", e.URI, e.Failure, e.Detail)
}

// Is makes errors.Is(err, ErrVerification) true.
func (e *VerifyError) Is(target error) bool { return target == ErrVerification }

// Client reads the skills of the server c is connected to. Its cache and
// every skill it loads belong to that one server: a host connected to
// several keeps a Client for each, so that same-URI skills of different
// servers stay apart.
type Client struct {
	c     *client.Client
	mu    sync.Mutex
	cache map[string]cached // "list\x00cursor" or "get\x00uri"
}

// cached is a result kept until its ttlMs runs out.
type cached struct {
	until time.Time
	value any
}

// NewClient reads skills through c.
func NewClient(c *client.Client) *Client { return &Client{c: c, cache: map[string]cached{}} }

// Supported reports whether the server declares the extension.
func (sc *Client) Supported() bool { _, ok := sc.settings(); return ok }

// DirectoryRead reports whether the server serves resources/directory/read.
func (sc *Client) DirectoryRead() bool {
	s, _ := sc.settings()
	v, _ := s["directoryRead"].(bool)
	return v
}

func (sc *Client) settings() (map[string]any, bool) {
	v, ok := sc.c.ServerCapabilities().Extensions[Extension]
	m, _ := v.(map[string]any)
	return m, ok
}

// List returns one page of the server's skill entries. The page is
// cached for its ttlMs (the server's freshness hint; a result without one
// is not cached), so that a host re-listing soon after sends nothing.
func (sc *Client) List(ctx context.Context, cursor string) (*ListResult, error) {
	key := "list\x00" + cursor
	if v, ok := sc.cached(key); ok {
		return v.(*ListResult), nil
	}
	if !sc.Supported() {
		return nil, ErrNotSupported
	}
	var res ListResult
	if err := sc.c.CallMethod(ctx, MethodList, &ListParams{Cursor: cursor}, &res); err != nil {
		return nil, err
	}
	sc.keep(key, &res, res.CacheFields)
	return &res, nil
}

// Skills iterates over every skill entry, page by page.
func (sc *Client) Skills(ctx context.Context) iter.Seq2[Skill, error] {
	return func(yield func(Skill, error) bool) {
		seen := map[string]bool{}
		for cursor := ""; ; {
			res, err := sc.List(ctx, cursor)
			if err != nil {
				yield(Skill{}, err)
				return
			}
			for _, s := range res.Skills {
				if !yield(s, nil) {
					return
				}
			}
			if res.NextCursor == "" {
				return
			}
			if seen[res.NextCursor] {
				yield(Skill{}, fmt.Errorf("skills/list: the server repeated cursor %q", res.NextCursor))
				return
			}
			seen[res.NextCursor], cursor = true, res.NextCursor
		}
	}
}

// Get returns the current entry of the skill whose SKILL.md is at uri,
// listed or not, cached for its ttlMs as [Client.List] caches pages.
func (sc *Client) Get(ctx context.Context, uri string) (*Skill, error) {
	key := "get\x00" + uri
	if v, ok := sc.cached(key); ok {
		return v.(*Skill), nil
	}
	if !sc.Supported() {
		return nil, ErrNotSupported
	}
	var res GetResult
	if err := sc.c.CallMethod(ctx, MethodGet, &GetParams{URI: uri}, &res); err != nil {
		return nil, err
	}
	sc.keep(key, &res.Skill, res.CacheFields)
	return &res.Skill, nil
}

// Forget drops the cached pages and entries, so that the next List or
// Get asks the server.
func (sc *Client) Forget() {
	sc.mu.Lock()
	clear(sc.cache)
	sc.mu.Unlock()
}

func (sc *Client) cached(key string) (any, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c, ok := sc.cache[key]
	if !ok || !time.Now().Before(c.until) {
		delete(sc.cache, key)
		return nil, false
	}
	return c.value, true
}

// keep caches a result for its ttlMs. Both scopes are kept: the cache is
// this client's own, never shared with another user's.
func (sc *Client) keep(key string, v any, cf protocol.CacheFields) {
	if cf.TTLMs == nil || *cf.TTLMs <= 0 {
		return
	}
	sc.mu.Lock()
	sc.cache[key] = cached{until: time.Now().Add(time.Duration(*cf.TTLMs) * time.Millisecond), value: v}
	sc.mu.Unlock()
}

// ReadDirectory returns one page of the direct children of a directory
// resource. It is live: never a way to extend a loaded skill's manifest.
func (sc *Client) ReadDirectory(ctx context.Context, uri, cursor string) (*ReadDirectoryResult, error) {
	if !sc.DirectoryRead() {
		return nil, fmt.Errorf("%w with directoryRead", ErrNotSupported)
	}
	var res ReadDirectoryResult
	if err := sc.c.CallMethod(ctx, MethodReadDirectory, &ReadDirectoryParams{URI: uri, Cursor: cursor}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Loaded is a skill the host acts on: its SKILL.md read and verified, and
// the entry it was loaded under held. Its other files are read, and
// verified, only when asked for; a file the held manifest does not list
// is never read.
type Loaded struct {
	Skill   Skill
	SkillMD []byte // SKILL.md as read and verified

	sc        *Client
	root      string // the skill's directory URI
	manifest  map[string]Resource
	mu        sync.Mutex
	files     map[string][]byte // verified content, by URI
	retrieved int64             // bytes read of a dynamic skill
}

// Load loads a skill from its entry: it checks the entry, reads SKILL.md
// and verifies it against the entry (size, digest, and frontmatter field
// by field), and reads nothing else. A mismatch is a [*VerifyError]; the
// skill must then not be used.
func (sc *Client) Load(ctx context.Context, entry *Skill) (*Loaded, error) {
	manifest, err := checkEntry(entry)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Skill: *entry, sc: sc, root: parentURI(entry.URI), manifest: manifest, files: map[string][]byte{}}
	data, err := l.read(ctx, entry.URI)
	if err != nil {
		return nil, err
	}
	if err := compareFrontmatter(entry, data); err != nil {
		return nil, err
	}
	l.SkillMD = data
	return l, nil
}

// checkEntry checks what can be checked of an entry before reading
// anything: its URI, name and manifest, and the limits.
func checkEntry(e *Skill) (map[string]Resource, error) {
	invalid := func(format string, args ...any) error {
		return &VerifyError{URI: e.URI, Failure: InvalidEntry, Detail: fmt.Sprintf(format, args...)}
	}
	root := parentURI(e.URI)
	switch {
	case path.Base(e.URI) != SkillFile || root == "":
		return nil, invalid("the uri is not that of a SKILL.md")
	case path.Base(root) != e.Name():
		return nil, invalid("the final segment of the skill path is not the name %q", e.Name())
	case e.Dynamic:
		return nil, nil
	case len(e.Resources) > MaxResources:
		return nil, &VerifyError{URI: e.URI, Failure: OverLimit, Detail: fmt.Sprintf("%d files", len(e.Resources))}
	}
	manifest := make(map[string]Resource, len(e.Resources))
	var total int64
	for _, r := range e.Resources {
		if r.URI != e.URI && !strings.HasPrefix(r.URI, root+"/") {
			return nil, invalid("%s is outside the skill", r.URI)
		}
		if r.Size < 0 || len(r.Digest) != len("sha256:")+64 || !strings.HasPrefix(r.Digest, "sha256:") {
			return nil, invalid("%s has an invalid digest or size", r.URI)
		}
		total += r.Size
		manifest[r.URI] = r
	}
	if _, ok := manifest[e.URI]; !ok {
		return nil, invalid("the manifest does not list SKILL.md")
	}
	if total > MaxTotalSize {
		return nil, &VerifyError{URI: e.URI, Failure: OverLimit, Detail: fmt.Sprintf("%d bytes in all", total)}
	}
	return manifest, nil
}

// compareFrontmatter compares SKILL.md's frontmatter with the entry's,
// field by field, as JSON values.
func compareFrontmatter(entry *Skill, data []byte) error {
	fm, _, err := ParseFrontmatter(data)
	if err != nil {
		return &VerifyError{URI: entry.URI, Failure: FrontmatterMismatch, Detail: err.Error()}
	}
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range fm {
			yield(k)
		}
		for k := range entry.Frontmatter {
			if _, ok := fm[k]; !ok {
				yield(k)
			}
		}
	})
	slices.Sort(keys)
	for _, k := range keys {
		if !sameJSON(fm[k], entry.Frontmatter[k]) {
			return &VerifyError{URI: entry.URI, Failure: FrontmatterMismatch, Detail: fmt.Sprintf("field %q differs from the entry's", k)}
		}
	}
	return nil
}

// sameJSON compares two values in their canonical JSON form (RFC 8785),
// so that 5 and 5.0 are one number.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	va, vb := jsontext.Value(ja), jsontext.Value(jb)
	if va.Canonicalize() != nil || vb.Canonicalize() != nil {
		return false
	}
	return bytes.Equal(va, vb)
}

// ReadFile returns a file of the loaded skill, name being its path in the
// skill ("references/FORMS.md", resolved against the skill's root) or its
// URI. A file the held manifest does not list is refused unread; one that
// is read is verified against the manifest (a dynamic skill's, having
// none, against the total-size limit only) and kept, so that reading it
// again sends nothing. The returned bytes must not be modified.
func (l *Loaded) ReadFile(ctx context.Context, name string) ([]byte, error) {
	uri, err := l.resolve(name)
	if err != nil {
		return nil, err
	}
	if uri == l.Skill.URI {
		return l.SkillMD, nil
	}
	if _, listed := l.manifest[uri]; !listed && !l.Skill.Dynamic {
		return nil, &VerifyError{URI: uri, Failure: Unlisted, Detail: "not in the manifest of " + l.Skill.URI}
	}
	l.mu.Lock()
	data, ok := l.files[uri]
	l.mu.Unlock()
	if ok {
		return data, nil
	}
	if data, err = l.read(ctx, uri); err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.files[uri] = data
	l.mu.Unlock()
	return data, nil
}

// resolve turns a path in the skill, or a URI, into a URI within the
// skill.
func (l *Loaded) resolve(name string) (string, error) {
	uri := name
	if !strings.Contains(name, "://") {
		clean := path.Clean(name)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return "", fmt.Errorf("skills: %q is outside the skill %s", name, l.Skill.URI)
		}
		uri = l.root + "/" + escapePath(clean)
	}
	if !strings.HasPrefix(uri, l.root+"/") {
		return "", fmt.Errorf("skills: %s is outside the skill %s", uri, l.Skill.URI)
	}
	return uri, nil
}

// read reads one file of the skill and verifies it: against the manifest
// when there is one, against the total-size limit for a dynamic skill.
func (l *Loaded) read(ctx context.Context, uri string) ([]byte, error) {
	res, err := l.sc.c.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	data, err := rawContent(res, uri)
	if err != nil {
		return nil, err
	}
	if l.Skill.Dynamic {
		return data, l.count(uri, len(data))
	}
	return data, verify(l.manifest[uri], data)
}

// count adds n bytes read of a dynamic skill, refusing past the limit.
func (l *Loaded) count(uri string, n int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.retrieved+int64(n) > MaxTotalSize {
		return &VerifyError{URI: uri, Failure: OverLimit, Detail: fmt.Sprintf("the skill's files take more than %d bytes", MaxTotalSize)}
	}
	l.retrieved += int64(n)
	return nil
}

// verify checks content against its manifest entry: the size first, so
// that a wrong length fails without hashing.
func verify(r Resource, data []byte) error {
	if int64(len(data)) != r.Size {
		return &VerifyError{URI: r.URI, Failure: SizeMismatch, Detail: fmt.Sprintf("%d bytes, the manifest says %d", len(data), r.Size)}
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != r.Digest {
		return &VerifyError{URI: r.URI, Failure: DigestMismatch, Detail: fmt.Sprintf("content hashes to %s, the manifest says %s", got, r.Digest)}
	}
	return nil
}

// rawContent returns the raw bytes of the contents of uri in a
// resources/read result.
func rawContent(res *protocol.ReadResourceResult, uri string) ([]byte, error) {
	for _, c := range res.Contents {
		if c.URI != uri && len(res.Contents) > 1 {
			continue
		}
		if c.IsBlob() {
			return base64.StdEncoding.DecodeString(c.Blob)
		}
		return []byte(c.Text), nil
	}
	return nil, fmt.Errorf("skills: resources/read of %s returned no contents for it", uri)
}
