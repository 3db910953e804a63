package host

import (
	"os"
	"testing"
)

// tempDir holds what the tests build; removed after them.
var tempDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ferry-host-test")
	if err != nil {
		panic(err)
	}
	tempDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
