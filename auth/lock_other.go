//go:build !unix && !windows

package auth

import (
	"os"
	"sync"
)

// Without file locks, the lock holds within the process: one mutex per
// lock file.
var locks sync.Map // path -> *sync.Mutex

func tryLock(f *os.File) (bool, error) {
	m, _ := locks.LoadOrStore(f.Name(), new(sync.Mutex))
	return m.(*sync.Mutex).TryLock(), nil
}

func unlockFile(f *os.File) {
	if m, ok := locks.Load(f.Name()); ok {
		m.(*sync.Mutex).Unlock()
	}
}
