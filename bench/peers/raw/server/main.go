// Command server is the ceiling of the benchmark: an echo server written
// without any MCP library, doing the least work that still answers the
// load generator and the SDK clients correctly in both eras. It finds the
// id, the method and the message by searching the request's bytes (the
// harness's messages are [a-z0-9-], and no client puts another "id" key
// before the request's own) and copies them into a template. Nothing is
// validated. No real server should be written this way; every other row
// is a percentage of this one.
//
//	server                           stdio
//	server -transport http -port N   Streamable HTTP on 127.0.0.1:N/mcp
package main

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

func main() {
	transport := flag.String("transport", "stdio", "stdio or http")
	port := flag.Int("port", 8080, "HTTP port (127.0.0.1 only)")
	flag.Parse()
	switch *transport {
	case "stdio":
		if err := serveStdio(os.Stdin, os.Stdout); err != nil {
			log.Fatal(err)
		}
	case "http":
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
		if err != nil {
			log.Fatal(err)
		}
		log.Fatal(http.Serve(ln, http.HandlerFunc(serveHTTP)))
	default:
		log.Fatal("-transport must be stdio or http")
	}
}

// serveStdio answers line by line on one goroutine, flushing only when no
// further request is already buffered, so answers to requests that came
// together leave together.
func serveStdio(in io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(in, 1<<16)
	bw := bufio.NewWriterSize(out, 1<<16)
	var line, answer []byte
	for {
		line = line[:0]
		for {
			part, err := br.ReadSlice('\n')
			line = append(line, part...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				bw.Flush()
				if err == io.EOF {
					return nil
				}
				return err
			}
			break
		}
		answer = respond(answer[:0], line)
		if len(answer) > 0 {
			bw.Write(answer)
			bw.WriteByte('\n')
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

var (
	sessions atomic.Int64
	// buffers holds request and answer buffers: a ceiling that allocated
	// and grew 64 KiB twice per call would measure the allocator.
	buffers = sync.Pool{New: func() any { return new(buffer) }}
)

type buffer struct{ req, answer []byte }

func serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	b := buffers.Get().(*buffer)
	defer buffers.Put(b)
	body, err := readBody(r, b.req[:0])
	b.req = body
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer := respond(b.answer[:0], body)
	b.answer = answer
	if len(answer) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(answer))}
	if method(body) == "initialize" {
		h["Mcp-Session-Id"] = []string{"raw-" + strconv.FormatInt(sessions.Add(1), 10)}
	}
	w.Write(answer)
}

// readBody reads the request body into buf, sized by Content-Length
// when the client sent one.
func readBody(r *http.Request, buf []byte) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= 1<<26 {
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		_, err := io.ReadFull(r.Body, buf)
		return buf, err
	}
	var bb bytes.Buffer
	_, err := bb.ReadFrom(r.Body)
	return append(buf, bb.Bytes()...), err
}

// respond appends the answer to one request to b; nothing for a
// notification.
func respond(b, req []byte) []byte {
	id := value(req, `"id":`)
	if id == nil {
		return b
	}
	b = append(append(append(b, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...)
	switch method(req) {
	case "tools/call":
		msg := stringAfter(req, `"message":"`)
		b = append(append(append(b, `{"content":[{"type":"text","text":"`...), msg...), `"}]`...)
		if bytes.Contains(req, []byte(`"io.modelcontextprotocol/protocolVersion"`)) {
			b = append(b, `,"resultType":"complete"`...)
		}
		return append(b, "}}"...)
	case "initialize":
		v := string(stringAfter(req, `"protocolVersion":"`))
		if v < "2024-11-05" || v >= "2026-07-28" {
			v = "2025-11-25"
		}
		return append(b, `{"protocolVersion":"`+v+`","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"0"}}}`...)
	case "server/discover":
		return append(b, `{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"0"}},"ttlMs":0,"cacheScope":"private"}}`...)
	case "tools/list":
		return append(b, `{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}],"ttlMs":0,"cacheScope":"private"}}`...)
	}
	return append(b[:0], `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32601,"message":"method not found"}}`...)
}

func method(req []byte) string { return string(stringAfter(req, `"method":"`)) }

// stringAfter returns the raw string after key (up to its closing quote).
func stringAfter(req []byte, key string) []byte {
	i := bytes.Index(req, []byte(key))
	if i < 0 {
		return nil
	}
	s := req[i+len(key):]
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return s[:j]
		}
	}
	return nil
}

// value returns the raw scalar after key (a number or a string).
func value(req []byte, key string) []byte {
	i := bytes.Index(req, []byte(key))
	if i < 0 {
		return nil
	}
	s := bytes.TrimLeft(req[i+len(key):], " ")
	if len(s) > 0 && s[0] == '"' {
		if v := stringAfter(s, `"`); v != nil {
			return s[:len(v)+2]
		}
		return nil
	}
	end := bytes.IndexAny(s, ",}")
	if end < 0 {
		return nil
	}
	return bytes.TrimSpace(s[:end])
}
