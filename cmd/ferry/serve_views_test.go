package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
)

// The views of the configuration are served, and a reload swaps them in
// with the rest of the policy, or, when one has an error, changes
// nothing and names the field.
func TestServeViewsAndTheirReload(t *testing.T) {
	opts := &gateway.Options{}
	pol, err := newServePolicy(nil, opts, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	bind, err := setupViews([]*config.File{parseFile(t, `{"mcpServers": {}, "views": {"one": {}}}`)}, opts, pol)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	bind(g)
	served := func(name string) bool {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/views/"+name+"/mcp", nil))
		return w.Code != http.StatusNotFound
	}
	if !served("one") || served("two") {
		t.Fatal("the configuration's views are not what is served")
	}
	bad := parseFile(t, `{"mcpServers": {}, "views": {"two": {"tools": {"a__x": {"name": "y"}, "b__z": {"name": "y"}}}}}`)
	err = pol.reload([]*config.File{bad})
	if err == nil || !strings.Contains(err.Error(), `ferry.json: views.two.tools: "a__x" and "b__z" are both named "y" in the view`) {
		t.Fatalf("reload of a bad view: %v", err)
	}
	if !served("one") || served("two") {
		t.Fatal("a refused configuration's views were served")
	}
	if err := pol.reload([]*config.File{parseFile(t, `{"mcpServers": {}, "views": {"two": {}}}`)}); err != nil {
		t.Fatal(err)
	}
	if served("one") || !served("two") {
		t.Fatal("a reload's views are not what is served")
	}
	if _, err := setupViews([]*config.File{bad}, &gateway.Options{}, pol); err == nil {
		t.Fatal("ferry serve started with a bad view")
	}
}
