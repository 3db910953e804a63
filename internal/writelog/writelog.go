// Package writelog records writes one by one, for tests that check how
// output was cut into write calls (answers batched into one write, say).
package writelog

import "sync"

// Log is an io.Writer that keeps every write it is given, in order.
type Log struct {
	mu     sync.Mutex
	writes []string
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, string(p))
	return len(p), nil
}

// Take returns the writes so far and forgets them.
func (l *Log) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.writes
	l.writes = nil
	return got
}
