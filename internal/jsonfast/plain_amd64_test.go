package jsonfast

import "testing"

// The word-at-a-time path, as on a CPU without AVX2.
func TestPlainPrefixWithoutAVX2(t *testing.T) {
	defer func(v bool) { hasAVX2 = v }(hasAVX2)
	hasAVX2 = false
	TestPlainPrefix(t)
	TestStringEnd(t)
	TestSimpleEnd(t)
	TestAppendQuoteMatchesV2(t)
}
