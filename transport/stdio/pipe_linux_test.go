package stdio

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	growPipe(w)
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if max, _ := strconv.Atoi(strings.TrimSpace(string(b))); max < pipeSize {
			t.Skipf("pipe-max-size is %d", max)
		}
	}
	if size < pipeSize {
		t.Errorf("pipe size %d after growPipe, want %d", size, pipeSize)
	}
	growPipe(os.NewFile(^uintptr(0), "bad")) // not a pipe, not an error
	growPipe(struct{}{})
}
