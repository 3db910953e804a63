package main

import (
	"context"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/gateway"
)

// --advertise reaches the replicas' options, and is refused without what
// makes replicas (--redis or --session-keys).
func TestServeAdvertise(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte(hex.EncodeToString(gateway.NewKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	o, stop, err := replicaOptions(context.Background(), &serveFlags{sessionKeys: keys, advertise: "http://10.0.0.5:8000"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if o.Advertise != "http://10.0.0.5:8000" {
		t.Errorf("Advertise = %q", o.Advertise)
	}
	if _, _, err := replicaOptions(context.Background(), &serveFlags{advertise: "http://10.0.0.5:8000"}, log); err == nil || !strings.Contains(err.Error(), "--advertise") {
		t.Errorf("--advertise alone: %v", err)
	}
}
