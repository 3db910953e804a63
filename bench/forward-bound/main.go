// Command forward-bound measures how fast any stdio-to-HTTP gateway can
// be on this machine: the least work a gateway must do, and nothing more.
// It is not a gateway anyone should run. It spawns one stdio server and
// serves POST /mcp on 127.0.0.1:PORT; for each message it
//
//   - answers a repeated initialize from the child's first answer, with
//     the new id (one child serves every client, as in ferry serve);
//   - writes a notification to the child and answers 202;
//   - rewrites a request's id to one unique among all clients (the first
//     "id": of the message, as JSON-RPC writers put it first or last and
//     the harness's messages carry no other), writes the line to the
//     child, and returns the answer with that id put back.
//
// No validation, no sessions, no prefixes, no limits, no logging: a
// benchmark row for it (scripts/bench-gateway.sh, "bound") is the ceiling
// of a gateway in front of that child, against which ferry serve's
// remaining overhead can be told from the cost of the extra hop itself.
//
//	forward-bound -port N -- CMD ARGS...
package main

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

func main() {
	port := flag.Int("port", 8000, "the port to listen on, on 127.0.0.1")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: forward-bound -port N -- CMD ARGS...")
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	f := &forwarder{child: stdin, waiting: map[int64]chan *[]byte{}}
	go f.read(stdout)
	http.HandleFunc("POST /mcp", f.serve)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+strconv.Itoa(*port), nil))
}

type forwarder struct {
	writeMu sync.Mutex
	child   io.Writer

	mu      sync.Mutex
	next    int64
	waiting map[int64]chan *[]byte
	initRes []byte // the child's initialize answer, from `,` after its id
}

// idKey starts the id of a JSON-RPC message.
const idKey = `"id":`

// buffers hold request lines and answers; pooled, since a gateway that
// allocated 64 KiB twice per call would measure its garbage collector.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 128<<10); return &b }}

func getBuffer(n int) *[]byte {
	b := buffers.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, 0, n)
	}
	*b = (*b)[:n]
	return b
}

// headroom is kept before a request's body so that a longer id can be
// written by moving the bytes before it, not the whole body.
const headroom = 32

func (f *forwarder) serve(w http.ResponseWriter, r *http.Request) {
	n := int(r.ContentLength)
	if n < 0 {
		http.Error(w, "no Content-Length", http.StatusLengthRequired)
		return
	}
	bp := getBuffer(headroom + n + 1)
	defer buffers.Put(bp)
	buf := *bp
	body := buf[headroom : headroom+n]
	if _, err := io.ReadFull(r.Body, body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	buf[headroom+n] = '\n'
	at := bytes.Index(body, []byte(idKey))
	if at < 0 {
		f.write(buf[headroom : headroom+n+1])
		w.WriteHeader(http.StatusAccepted)
		return
	}
	start := at + len(idKey)
	end := start + bytes.IndexAny(body[start:], ",}")
	clientID := append([]byte(nil), body[start:end]...)
	isInit := bytes.Contains(body, []byte(`"method":"initialize"`))
	f.mu.Lock()
	if isInit && f.initRes != nil {
		res := f.initRes
		f.mu.Unlock()
		reply(w, clientID, res)
		return
	}
	f.next++
	id := f.next
	ch := make(chan *[]byte, 1)
	f.waiting[id] = ch
	f.mu.Unlock()
	// Write the new id over the old one, moving what comes before it.
	var digits [20]byte
	newID := strconv.AppendInt(digits[:0], id, 10)
	from := headroom + end - len(newID) - start
	copy(buf[from:], buf[headroom:headroom+start])
	copy(buf[from+start:], newID)
	f.write(buf[from : headroom+n+1])
	answer := <-ch // from `,` or `}` after the id to the end of the line
	if isInit {
		f.mu.Lock()
		f.initRes = append([]byte(nil), *answer...)
		f.mu.Unlock()
	}
	reply(w, clientID, *answer)
	buffers.Put(answer)
}

func reply(w http.ResponseWriter, id, rest []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(`{"jsonrpc":"2.0","id":`)+len(id)+len(rest)))
	io.WriteString(w, `{"jsonrpc":"2.0","id":`)
	w.Write(id)
	w.Write(rest)
}

func (f *forwarder) write(line []byte) {
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	if _, err := f.child.Write(line); err != nil {
		log.Fatal(err)
	}
}

// read hands each answer of the child, from after its id, to the request
// waiting for it. The child (ferry's echo server) writes
// {"jsonrpc":"2.0","id":N,...}.
func (f *forwarder) read(stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 256<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			log.Fatal("the child's stdout: ", err)
		}
		at := bytes.Index(line, []byte(idKey))
		if at < 0 {
			continue // a notification
		}
		start := at + len(idKey)
		end := start + bytes.IndexAny(line[start:], ",}")
		id, err := strconv.ParseInt(string(line[start:end]), 10, 64)
		if err != nil {
			continue
		}
		f.mu.Lock()
		ch := f.waiting[id]
		delete(f.waiting, id)
		f.mu.Unlock()
		if ch != nil {
			rest := line[end : len(line)-1]
			answer := getBuffer(len(rest))
			copy(*answer, rest)
			ch <- answer
		}
	}
}
