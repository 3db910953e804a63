package main

import (
	"fmt"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/view"
)

// viewsOf compiles the "views" section of the first file that has one;
// none when no file has.
func viewsOf(files []*config.File) (*view.Set, error) {
	cv, err := config.ReadViews(files, config.DefaultOptions().Vars)
	if err != nil {
		return nil, err
	}
	set, err := view.New(cv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cv[0].Source, err) // a view's error names its path
	}
	return set, nil
}

// setupViews gives the gateway's options the configuration's views, and
// registers their reload: SIGHUP compiles them again with the rest of the
// policy, and swaps them in (Gateway.SetViews) when all of it builds.
// The gateway, made after, is given to the function it returns.
func setupViews(files []*config.File, opts *gateway.Options, pol *servePolicy) (bind func(*gateway.Gateway), err error) {
	if opts.Views, err = viewsOf(files); err != nil {
		return nil, err
	}
	var g *gateway.Gateway // set before a signal can reload
	pol.add(func(files []*config.File) (func(), error) {
		set, err := viewsOf(files)
		return func() { g.SetViews(set) }, err
	})
	return func(made *gateway.Gateway) { g = made }, nil
}
