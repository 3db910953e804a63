package main

import (
	"errors"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// SIGTERM makes ferry serve's /readyz answer 503 while it serves on for
// --drain-notice; a second signal ends it at once, with the signal's
// exit status.
func TestServeDrainNoticeAndSecondSignal(t *testing.T) {
	bin := buildFerry(t)
	cmd, url := startServe(t, bin, nil, "--drain-notice", "1m", "--", exampleServer)
	status := func() int {
		t.Helper()
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			t.Fatalf("/readyz: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for deadline := time.Now().Add(20 * time.Second); status() != http.StatusOK; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("ferry serve did not get ready")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for deadline := time.Now().Add(20 * time.Second); status() != http.StatusServiceUnavailable; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not turn 503 after SIGTERM")
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("after a second SIGTERM: %v, want exit status %d", err, 128+int(syscall.SIGTERM))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a second SIGTERM did not end ferry serve within the minute of notice")
	}
}
