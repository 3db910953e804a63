package jsonfast

// vectorPlain is turned off by tests of the portable path.
var vectorPlain = true

// plainPrefixVector returns how many whole 16-byte blocks at the start of
// b are plain, times 16, or where in the first block that is not the
// first byte that is not plain lies.
func plainPrefixVector(b []byte) int {
	if !vectorPlain || len(b) < 16 {
		return 0
	}
	return plainPrefixSSE2(b)
}

// plainPrefixSSE2 is implemented in plain_amd64.s.
//
//go:noescape
func plainPrefixSSE2(b []byte) int
