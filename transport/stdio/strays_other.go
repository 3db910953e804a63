//go:build !linux

package stdio

import (
	"os"
	"time"
)

// strays: elsewhere than on Linux, only the server's process group is
// stopped.
type strays struct{}

func newStrays(pid int, files ...*os.File) *strays { return &strays{} }
func (st *strays) scan()                           {}
func (st *strays) stop(grace time.Duration)        {}
