package stdio

import (
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

const (
	// noiseLogged is how many of the lines skipped on a server's stdout
	// are logged one by one; the rest are counted, and the count logged
	// at most every noiseEvery: a server that writes nothing but noise
	// at pipe speed (300 MiB made 314,259 records in 1.8 s) makes a few
	// records, not a log as large as its output.
	noiseLogged = 3
	noiseEvery  = 10 * time.Second
	// noiseShown bounds the start of a line shown in a record;
	// noiseQuoted the start of the first line quoted in errors.
	noiseShown  = 200
	noiseQuoted = 60
)

// noise logs, boundedly, and remembers the lines skipped on a server's
// stdout because they are not JSON, so that an error can say why a
// server that printed only them never answered.
type noise struct {
	log *slog.Logger
	pid int

	mu       sync.Mutex
	lines    int       // skipped in all
	first    string    // the start of the first, quoted
	unlogged int       // skipped since the last record
	logged   time.Time // when the last record was made
}

// skip takes note of a skipped line.
func (n *noise) skip(line []byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines++
	if n.lines == 1 {
		n.first = quoteStart(line, noiseQuoted)
	}
	now := time.Now()
	if n.lines <= noiseLogged {
		n.log.Warn("stdio: skipped a line of the server's stdout that is not JSON",
			"line", strings.ToValidUTF8(string(line[:min(len(line), noiseShown)]), "\uFFFD"), "pid", n.pid)
		n.logged = now
		return
	}
	n.unlogged++
	if now.Sub(n.logged) >= noiseEvery {
		n.flushLocked(now)
	}
}

// flush logs the count of the lines skipped since the last record.
func (n *noise) flush() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.flushLocked(time.Now())
}

func (n *noise) flushLocked(now time.Time) {
	if n.unlogged == 0 {
		return
	}
	n.log.Warn("stdio: skipped more lines of the server's stdout that are not JSON",
		"lines", n.unlogged, "total", n.lines, "pid", n.pid)
	n.unlogged, n.logged = 0, now
}

// skipped returns how many lines were skipped and the start of the
// first, quoted.
func (n *noise) skipped() (lines int, first string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lines, n.first
}

// quoteStart quotes the first max bytes of b (fewer rather than half a
// character) as a Go string: control characters and invalid UTF-8
// escaped, so that what a server wrote cannot act on a terminal or a
// log.
func quoteStart(b []byte, max int) string {
	if len(b) <= max {
		return strconv.Quote(string(b))
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut])) + "…"
}
