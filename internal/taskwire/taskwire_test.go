package taskwire

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// shapeCases are one record per status that changes the shapes, with
// the bytes both eras showed before the server and the gateway shared
// this package (measured on b211c63 from server.detailed/legacyTask and
// gateway.detailedTask/legacyTask): the wire must not move.
var shapeCases = []struct {
	name             string
	rec              Record
	detailed, legacy string
}{
	{
		name: "working",
		rec:  record(protocol.TaskWorking, func(r *Record) { r.StatusMessage = "busy" }),
		detailed: `{"taskId":"t1","status":"working","statusMessage":"busy","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttlMs":60000,"pollIntervalMs":1500}`,
		legacy: `{"taskId":"t1","status":"working","statusMessage":"busy","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttl":60000,"pollInterval":1500}`,
	},
	{
		name: "input_required",
		rec: record(protocol.TaskInputRequired, func(r *Record) {
			r.InputRequests = map[string]protocol.InputRequest{"q": {Method: protocol.MethodElicit}}
		}),
		detailed: `{"taskId":"t1","status":"input_required","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttlMs":60000,"pollIntervalMs":1500,` +
			`"inputRequests":{"q":{"method":"elicitation/create"}}}`,
		legacy: `{"taskId":"t1","status":"input_required","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttl":60000,"pollInterval":1500}`,
	},
	{
		name: "completed",
		rec:  record(protocol.TaskCompleted, func(r *Record) { r.Result = []byte(`{"content":[]}`) }),
		detailed: `{"taskId":"t1","status":"completed","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttlMs":60000,"pollIntervalMs":1500,"result":{"content":[]}}`,
		legacy: `{"taskId":"t1","status":"completed","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttl":60000,"pollInterval":1500}`,
	},
	{
		name: "failed",
		rec:  record(protocol.TaskFailed, func(r *Record) { r.Error = &jsonrpc.Error{Code: -32603, Message: "boom"} }),
		detailed: `{"taskId":"t1","status":"failed","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttlMs":60000,"pollIntervalMs":1500,"error":{"code":-32603,"message":"boom"}}`,
		legacy: `{"taskId":"t1","status":"failed","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttl":60000,"pollInterval":1500}`,
	},
	{
		name: "unlimited ttl",
		rec:  record(protocol.TaskWorking, func(r *Record) { r.TTL = 0 }),
		detailed: `{"taskId":"t1","status":"working","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttlMs":null,"pollIntervalMs":1500}`,
		legacy: `{"taskId":"t1","status":"working","createdAt":"2026-01-02T03:04:05.006Z",` +
			`"lastUpdatedAt":"2026-01-02T03:04:06Z","ttl":null,"pollInterval":1500}`,
	},
}

// record is a task in status, changed by edit; its times are not UTC so
// that the shapes' conversion to UTC shows.
func record(status string, edit func(*Record)) Record {
	east := time.FixedZone("east", 2*3600)
	r := Record{ID: "t1", Status: status,
		CreatedAt:    time.Date(2026, 1, 2, 5, 4, 5, 6e6, east),
		UpdatedAt:    time.Date(2026, 1, 2, 5, 4, 6, 0, east),
		TTL:          time.Minute,
		PollInterval: 1500 * time.Millisecond}
	edit(&r)
	return r
}

func TestShapes(t *testing.T) {
	for _, tc := range shapeCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := marshal(t, Detailed(&tc.rec)); got != tc.detailed {
				t.Errorf("Detailed:\n got %s\nwant %s", got, tc.detailed)
			}
			if got := marshal(t, Legacy(&tc.rec)); got != tc.legacy {
				t.Errorf("Legacy:\n got %s\nwant %s", got, tc.legacy)
			}
		})
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
