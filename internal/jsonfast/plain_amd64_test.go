package jsonfast

import "testing"

// The word-at-a-time path, as on other architectures.
func TestPlainPrefixPortable(t *testing.T) {
	defer func(v bool) { vectorPlain = v }(vectorPlain)
	vectorPlain = false
	TestPlainPrefix(t)
	TestStringEnd(t)
	TestSimpleEnd(t)
	TestAppendQuoteMatchesV2(t)
}
