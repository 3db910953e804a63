package server

import "github.com/ferrymcp/ferry/internal/jsonfast"

// textOnlyResult is the result of a typed tool whose output is a string,
// answering a legacy request: what a [protocol.CallToolResult] of one
// text block encodes to, without allocating one (with its [protocol.Content],
// a few hundred bytes of fields left empty) on every call.
type textOnlyResult struct{ text string }

// AppendJSON appends what [protocol.CallToolResult.AppendJSON] does for
// the same result (jsonrpc.Appender).
func (r *textOnlyResult) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"content":[{"type":"text","text":`...)
	b, err := jsonfast.AppendQuote(b, r.text)
	if err != nil {
		return b, err
	}
	return append(b, "}]}"...), nil
}

// MarshalJSON lets anything that encodes results without
// jsonrpc.Appender see the same JSON.
func (r *textOnlyResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }
