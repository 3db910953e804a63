package otlp

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ferrymcp/ferry/internal/bodytext"
)

// PartialSuccessError says that the receiver took an export but rejected
// some of its spans.
type PartialSuccessError struct {
	Rejected int64
	Message  string
}

func (e *PartialSuccessError) Error() string {
	msg := fmt.Sprintf("otlp: the receiver rejected %d spans", e.Rejected)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// partialSuccess reads the ExportTraceServiceResponse of a 2xx answer: a
// *PartialSuccessError when it has a partial_success with rejected spans
// or a message, nil otherwise (an empty or unreadable answer too: the
// export was taken).
func partialSuccess(answer []byte) error {
	ps, ok := field(answer, 1, protowire.BytesType)
	if !ok {
		return nil
	}
	var e PartialSuccessError
	if v, ok := field(ps, 1, protowire.VarintType); ok {
		n, _ := protowire.ConsumeVarint(v)
		e.Rejected = int64(n)
	}
	if v, ok := field(ps, 2, protowire.BytesType); ok {
		e.Message = bodytext.Excerpt(v, "text/plain")
	}
	if e.Rejected == 0 && e.Message == "" {
		return nil
	}
	return &e
}

// statusMessage is what an error answer says, ready to append to an
// error: the message of a google.rpc.Status, as OTLP/HTTP receivers send
// it, or the start of another answer, as one short line.
func statusMessage(contentType string, answer []byte) string {
	if strings.HasPrefix(contentType, "application/x-protobuf") {
		answer, _ = field(answer, 2, protowire.BytesType)
		contentType = "text/plain"
	}
	if msg := bodytext.Excerpt(answer, contentType); msg != "" {
		return ": " + msg
	}
	return ""
}

// field returns the last value of field num in msg, if it has the wire
// type typ (proto3: the last one wins). A malformed message has none.
func field(msg []byte, num protowire.Number, typ protowire.Type) ([]byte, bool) {
	var found []byte
	ok := false
	for len(msg) > 0 {
		n, t, size := protowire.ConsumeTag(msg)
		if size < 0 {
			return nil, false
		}
		vsize := protowire.ConsumeFieldValue(n, t, msg[size:])
		if vsize < 0 {
			return nil, false
		}
		if n == num && t == typ {
			found, ok = msg[size:size+vsize], true
			if t == protowire.BytesType {
				found, _ = protowire.ConsumeBytes(found)
			}
		}
		msg = msg[size+vsize:]
	}
	return found, ok
}
