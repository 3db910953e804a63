package gateway

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
)

// KeySize is the size of a session sealing key: AES-256.
const KeySize = 32

// sealVersion is the first byte of a sealed session id, so that a later
// layout can be told from this one.
const sealVersion = 1

// Sealer seals what replicas of a gateway must know of a legacy session
// into the session's id (AES-256-GCM), so that any replica holding the
// key serves the session with nothing to look up. It holds a current key,
// which seals, and previous ones, which still open ids sealed before a
// rotation. It is safe for concurrent use; SetKeys rotates keys while it
// is in use.
type Sealer struct {
	ring atomic.Pointer[keyRing]
}

// keyRing is one set of keys: the current one first.
type keyRing struct {
	current keyed
	all     []keyed
}

// keyed is one key's cipher and its id: the first bytes of the key's
// SHA-256, which name the key in a sealed id without telling it.
type keyed struct {
	id   [4]byte
	aead cipher.AEAD
}

// NewSealer returns a sealer whose current key is keys[0]; the others
// are previous keys, which open ids but do not seal.
func NewSealer(keys ...[]byte) (*Sealer, error) {
	s := &Sealer{}
	if err := s.SetKeys(keys...); err != nil {
		return nil, err
	}
	return s, nil
}

// SetKeys replaces the keys: keys[0] seals from now on, all of them open.
func (s *Sealer) SetKeys(keys ...[]byte) error {
	if len(keys) == 0 {
		return errors.New("gateway: no session key")
	}
	ring := &keyRing{}
	for i, k := range keys {
		if len(k) != KeySize {
			return fmt.Errorf("gateway: session key %d is %d bytes, not %d", i+1, len(k), KeySize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(k)
		ring.all = append(ring.all, keyed{id: [4]byte(sum[:4]), aead: aead})
	}
	ring.current = ring.all[0]
	s.ring.Store(ring)
	return nil
}

// seal returns plain sealed with the current key, as visible ASCII (a
// session id must be): version, key id, nonce and ciphertext, in
// unpadded base64url.
func (s *Sealer) seal(plain []byte) string {
	k := s.ring.Load().current
	head := make([]byte, 5, 5+k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	head[0] = sealVersion
	copy(head[1:], k.id[:])
	nonce := head[5 : 5+k.aead.NonceSize()]
	rand.Read(nonce)
	out := k.aead.Seal(head[:5+len(nonce)], nonce, plain, head[:5])
	return base64.RawURLEncoding.EncodeToString(out)
}

// errUnsealed is the error of an id no key of the sealer opens: forged,
// damaged, sealed with a key since retired, or not sealed at all.
var errUnsealed = errors.New("not a session id of this gateway")

// open returns what id seals, when one of the keys opens it.
func (s *Sealer) open(id string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(id)
	ring := s.ring.Load()
	if err != nil || len(b) < 5 || b[0] != sealVersion {
		return nil, errUnsealed
	}
	for _, k := range ring.all {
		if [4]byte(b[1:5]) != k.id {
			continue
		}
		n := k.aead.NonceSize()
		if len(b) < 5+n+k.aead.Overhead() {
			return nil, errUnsealed
		}
		plain, err := k.aead.Open(nil, b[5:5+n], b[5+n:], b[:5])
		if err != nil {
			return nil, errUnsealed
		}
		return plain, nil
	}
	return nil, errUnsealed
}

// NewKey returns a new random session key.
func NewKey() []byte {
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

// ReadKeys reads session keys, one a line in hex (64 digits), the current
// one first, previous ones after it; blank lines and lines that begin
// with # are skipped. The error never holds a key.
func ReadKeys(r io.Reader) ([][]byte, error) {
	var keys [][]byte
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := hex.DecodeString(line)
		if err != nil || len(k) != KeySize {
			return nil, fmt.Errorf("session keys, line %d: not a key of %d hex digits", n, 2*KeySize)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("session keys: no key")
	}
	return keys, nil
}
