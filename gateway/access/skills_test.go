package access_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// A skill's files are resources: the skills list shows those the caller
// may read, and skills/get and resources/directory/read of the others
// are refused naming the rule.
func TestSkillsFollowResourceRules(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "k", Version: "1"}, nil)
	if err := skills.Serve(s, nil).AddFS(os.DirFS("../../skills/testdata/catalog")); err != nil {
		t.Fatal(err)
	}
	h := streamablehandler.New(s, nil)
	up := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); up.CloseClientConnections(); up.Close() })
	p, err := access.Compile(&config.Access{Rules: []config.AccessRule{
		{Description: "pdf for all", Allow: &config.Condition{}, Resources: []string{"skill://*pdf-processing*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New([]*config.Server{{Name: "k", Transport: config.HTTP, URL: up.URL}},
		&gateway.Options{Auth: headerAuth, Middleware: []intercept.Middleware{access.NewLive(p).Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		g.Close(ctx)
	})
	ctx := context.Background()
	sc := skills.NewClient(connect(t, ts.URL+"/mcp", protocol.LatestLegacyVersion, "guest", "", ""))
	var uris []string
	for sk, err := range sc.Skills(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, sk.URI)
	}
	if len(uris) != 1 || !strings.Contains(uris[0], "pdf-processing") {
		t.Fatalf("the guest lists skills %v, want pdf-processing only", uris)
	}
	if _, err := sc.Get(ctx, uris[0]); err != nil {
		t.Fatalf("skills/get of %s: %v", uris[0], err)
	}
	refunds := strings.Replace(uris[0], "pdf-processing", "acme/billing/refunds", 1)
	var rpc *jsonrpc.Error
	if _, err := sc.Get(ctx, refunds); !errors.As(err, &rpc) || !strings.Contains(rpc.Message, `the default (deny) refuses skills/get of "`+refunds+`"`) {
		t.Fatalf("skills/get of %s: %v", refunds, err)
	}
	dir := strings.TrimSuffix(refunds, "/SKILL.md")
	if _, err := sc.ReadDirectory(ctx, dir, ""); !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "refuses resources/directory/read") {
		t.Fatalf("resources/directory/read of %s: %v", dir, err)
	}
}
