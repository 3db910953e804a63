//go:build !linux

package stdio

import "os"

// reopen is only possible through Linux's /proc.
func reopen(f *os.File) *os.File { return nil }
