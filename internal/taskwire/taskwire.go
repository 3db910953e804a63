// Package taskwire shows a task record in the shapes of both protocol
// eras: the tasks extension's DetailedTask (2026-07-28) and the
// experimental Task (2025-11-25). The server and the gateway keep their
// own records; both convert them here so that their answers cannot drift
// apart.
package taskwire

import (
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Record is what the wire shapes need of a task.
type Record struct {
	ID            string
	Status        string
	StatusMessage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// TTL is how long after CreatedAt the task is kept; zero means
	// unlimited, which the wire shows as null.
	TTL          time.Duration
	PollInterval time.Duration
	// Result is shown when the task completed, Error when it failed,
	// InputRequests when it waits for input.
	Result        jsontext.Value
	Error         *jsonrpc.Error
	InputRequests map[string]protocol.InputRequest
}

// Detailed is the task as the tasks extension shows it.
func Detailed(r *Record) *protocol.DetailedTask {
	d := &protocol.DetailedTask{TaskID: r.ID, Status: r.Status, StatusMessage: r.StatusMessage,
		CreatedAt: timestamp(r.CreatedAt), LastUpdatedAt: timestamp(r.UpdatedAt),
		TTLMs: ttl(r.TTL), PollIntervalMs: millis(r.PollInterval)}
	switch r.Status {
	case protocol.TaskInputRequired:
		d.InputRequests = r.InputRequests
	case protocol.TaskCompleted:
		d.Result = r.Result
	case protocol.TaskFailed:
		if r.Error != nil {
			d.Error, _ = json.Marshal(r.Error)
		}
	}
	return d
}

// Legacy is the task as 2025-11-25 shows it.
func Legacy(r *Record) protocol.Task {
	return protocol.Task{TaskID: r.ID, Status: r.Status, StatusMessage: r.StatusMessage,
		CreatedAt: timestamp(r.CreatedAt), LastUpdatedAt: timestamp(r.UpdatedAt),
		TTL: ttl(r.TTL), PollInterval: millis(r.PollInterval)}
}

// ttl is the wire's TTL: null for an unlimited task.
func ttl(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	return millis(d)
}

func millis(d time.Duration) *int64 {
	v := d.Milliseconds()
	return &v
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
