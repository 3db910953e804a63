package jsonfast

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// plainPrefixVector returns how many whole 32-byte blocks at the start of
// b are plain, times 32, or where in the first block that is not the
// first byte that is not plain lies.
func plainPrefixVector(b []byte) int {
	if !hasAVX2 || len(b) < 32 {
		return 0
	}
	return plainPrefixAVX2(b)
}

// plainPrefixAVX2 is implemented in plain_amd64.s.
//
//go:noescape
func plainPrefixAVX2(b []byte) int
