package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// interrupted is the cause of the root context's cancellation when ferry
// gets SIGINT (Ctrl-C), SIGTERM or SIGHUP.
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string {
	switch e.sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	}
	return "stopped by " + e.sig.String()
}

// code is the exit status a shell gives a process that the signal
// killed: 128 + its number (130 for SIGINT, 143 for SIGTERM).
func (e *interrupted) code() int { return 128 + int(e.sig) }

// interruptCode returns the exit code of a run whose root context a
// signal cancelled, and whether it was.
func interruptCode(ctx context.Context) (int, bool) {
	var in *interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in.code(), true
	}
	return 0, false
}

// cleanupGrace bounds the clean-up after a signal: cancelling the calls
// in flight, ending HTTP sessions, stopping the servers' process groups
// (a server that ignores the end of its stdin gets SIGTERM after 2 s and
// SIGKILL 2 s later), flushing the trace.
const cleanupGrace = 6 * time.Second

// withSignals returns a context that the first SIGINT, SIGTERM or SIGHUP
// cancels, with an *interrupted as its cause, so that the command can
// clean up and return. A second signal, or a clean-up longer than
// cleanupGrace, ends the process at once with the signal's exit code.
func withSignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		var first *interrupted
		var grace <-chan time.Time
		for {
			select {
			case s := <-ch:
				in := &interrupted{sig: s.(syscall.Signal)}
				if first != nil {
					os.Exit(first.code())
				}
				first = in
				cancel(in)
				grace = time.After(cleanupGrace)
			case <-grace:
				os.Exit(first.code())
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
