// Package otlptest is an OTLP/HTTP trace receiver on loopback, for tests
// of programs that export spans: it takes the exports an OTLP exporter
// posts (protobuf, gzip or not) and decodes each with opentelemetry-
// proto's own generated code, so that what a test sees is what a
// collector would.
package otlptest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Export is one export as the receiver got it.
type Export struct {
	Header http.Header
	// Body is the message, uncompressed.
	Body    []byte
	Request *coltrace.ExportTraceServiceRequest
}

// Receiver listens at URL and keeps the exports posted to URL/v1/traces.
// Anything else (another path or method, another content type, a body
// that is not an ExportTraceServiceRequest) gets 400 and is not kept.
type Receiver struct {
	*httptest.Server
	mu      sync.Mutex
	exports []Export
}

// NewReceiver starts a receiver that t's cleanup stops.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	export := Export{Header: req.Header.Clone(), Body: data, Request: &coltrace.ExportTraceServiceRequest{}}
	if err := proto.Unmarshal(data, export.Request); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.exports = append(r.exports, export)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// Exports returns the exports received so far, in the order they came.
func (r *Receiver) Exports() []Export {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Export(nil), r.exports...)
}

// Take returns the exports received so far and forgets them.
func (r *Receiver) Take() []Export {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.exports
	r.exports = nil
	return e
}
