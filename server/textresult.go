package server

import "github.com/ferrymcp/ferry/internal/jsonfast"

// textOnlyResult is the result of a typed tool whose output is a string,
// answering a legacy request: what a [protocol.CallToolResult] of one
// text block encodes to, without allocating one (with its [protocol.Content],
// a few hundred bytes of fields left empty) on every call.
type textOnlyResult struct{ text string }

// AppendOut writes what mcpjson.ToolResult.AppendOut does for the
// same result (jsonfast.OutAppender): a long text is referred to.
func (r *textOnlyResult) AppendOut(o *jsonfast.Out) error {
	o.B = append(o.B, `{"content":[{"type":"text","text":`...)
	if err := o.Quote(r.text); err != nil {
		return err
	}
	o.B = append(o.B, "}]}"...)
	return nil
}

// AppendJSON appends the same JSON (jsonfast.Appender).
func (r *textOnlyResult) AppendJSON(b []byte) ([]byte, error) {
	o := jsonfast.Out{B: b}
	err := r.AppendOut(&o)
	return o.B, err
}

// MarshalJSON lets anything that encodes results without
// jsonfast.Appender see the same JSON.
func (r *textOnlyResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }
