// Package soak holds a soak test of the Streamable HTTP server, built only
// with the "soak" tag so that CI does not spend minutes on it:
//
//	go test -tags soak -run TestSoak -timeout 30m ./soak -soak.duration 3m -soak.out ../bench/results/soak-DATE.txt
//
// For the given time it serves well-behaved clients of both eras beside
// thousands of sessions opened and abandoned and slow and hostile peers
// (trickled headers and bodies, announced bodies never sent, idle
// keep-alive connections, readers that stop reading, oversized and
// malformed messages, floods of initialize and subscribe), all on
// loopback. It fails unless every well-behaved call was served and,
// once the peers are gone and the session idle timeout has passed, the
// goroutines and the live heap are back to where they started.
package soak
