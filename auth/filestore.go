package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// FileStore is a Store that keeps each server's record in a file of its
// own, readable by its owner only (mode 0600, in a directory of mode
// 0700), and locks the record across processes while it is updated: two
// processes that find a token expired at once refresh it once, the
// second finding the first one's new token when it gets the lock.
//
// Files are replaced in one piece (written beside, then renamed), so a
// reader never sees half a record. On systems without file locks (other
// than Unix and Windows) the lock holds within the process only.
type FileStore struct {
	// Dir is where the files are kept. Empty means DefaultDir().
	Dir string
}

// DefaultDir is the directory of the default FileStore: "ferry/oauth"
// in the user's configuration directory (os.UserConfigDir).
func DefaultDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ferry", "oauth"), nil
}

func (s *FileStore) dir() (string, error) {
	if s.Dir != "" {
		return s.Dir, nil
	}
	return DefaultDir()
}

// Path returns the file that holds the record of server: a name made of
// the server's host and path, readable in a listing, and a hash of the
// whole URL that tells apart the servers whose names read the same.
func (s *FileStore) Path(server string) (string, error) {
	dir, err := s.dir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(server))
	name := server
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		name = u.Host + u.Path
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, name)
	if len(name) > 64 {
		name = name[:64]
	}
	return filepath.Join(dir, strings.Trim(name, "_")+"-"+hex.EncodeToString(sum[:6])+".json"), nil
}

// Load reads the record of server.
func (s *FileStore) Load(_ context.Context, server string) (*Record, error) {
	p, err := s.Path(server)
	if err != nil {
		return nil, err
	}
	return readRecord(p)
}

func readRecord(p string) (*Record, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("auth: %s is not a token record: %w", p, err)
	}
	return &r, nil
}

// Update locks the record of server (in this process and in others),
// reads it, and writes what f returns.
func (s *FileStore) Update(ctx context.Context, server string, f func(*Record) (*Record, error)) error {
	p, err := s.Path(server)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	unlock, err := lockFile(ctx, p+".lock")
	if err != nil {
		return fmt.Errorf("auth: locking %s: %w", p, err)
	}
	defer unlock()
	old, err := readRecord(p)
	if err != nil {
		return err
	}
	r, err := f(old)
	if err != nil {
		return err
	}
	if r == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	r.Server = server
	return writeRecord(p, r)
}

// writeRecord replaces the file p with r, in one piece.
func writeRecord(p string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// lockPoll is how often a held lock is tried again.
const lockPoll = 20 * time.Millisecond

// lockFile takes the lock of the file p, created if need be, waiting
// until it is free or ctx ends. The lock is held by the open file:
// another process, or another Update of this one, waits for it.
func lockFile(ctx context.Context, p string) (unlock func(), err error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
	}
}
