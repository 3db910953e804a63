//go:build race

// Package racecheck reports whether the race detector is on, for tests
// that count allocations: the detector adds its own.
package racecheck

// Enabled reports whether the binary was built with -race.
const Enabled = true
