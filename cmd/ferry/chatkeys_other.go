//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos)

package main

import "errors"

// holdKeys is not done here: what is typed during an answer is echoed.
func holdKeys(int) (func(), error) { return nil, errors.ErrUnsupported }
