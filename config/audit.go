package config

// Audit is the "audit" section of a gateway's configuration: one record
// per call (tools/call, prompts/get, resources/read), as a JSON line.
//
//	"audit": {"file": "/var/log/ferry/audit.jsonl", "arguments": false}
type Audit struct {
	// File is where the records go, appended; empty means stderr.
	File string `json:"file,omitempty"`
	// Arguments, when true, puts the calls' arguments in the records;
	// otherwise only their SHA-256 digest is.
	Arguments bool `json:"arguments,omitempty"`
}
