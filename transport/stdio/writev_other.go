//go:build !linux

package stdio

import "io"

// writeVectored writes the pieces in order, with a Write each.
func writeVectored(w io.Writer, pieces [][]byte) error { return writeEach(w, pieces) }

// tryWriteVectored is writeVectored: it waits.
func tryWriteVectored(w io.Writer, pieces [][]byte) ([][]byte, error) {
	return nil, writeEach(w, pieces)
}
