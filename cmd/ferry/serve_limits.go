package main

import (
	"log/slog"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/limit"
)

// limitsOf compiles the "limits" section of the first file that has one;
// a policy without rules when none has.
func limitsOf(files []*config.File) (*limit.Policy, error) {
	var l config.Limits
	from, err := config.FirstSection(files, "limits", &l)
	if err != nil || from == nil {
		return limit.Compile(nil)
	}
	p, err := limit.Compile(&l)
	if err != nil {
		return nil, config.SectionError(from.Path, "limits", err)
	}
	return p, nil
}

// setupLimits puts the limiter of the configuration's limits in the
// gateway's options: its HTTP middleware inside the authentication, its
// MCP middleware around the serving of every request (after the access
// rules: a refused call counts against no limit); shared by the replicas
// when they share a Redis, rates and calls in flight alike. It is there even without limits, so that
// SIGHUP can add some: without rules it costs a request an atomic load
// on each side. SIGHUP builds the limits again with the rest of the
// policy, and swaps them in (Limiter.Set) when all of it builds.
func setupLimits(files []*config.File, opts *gateway.Options, pol *servePolicy, log *slog.Logger) error {
	p, err := limitsOf(files)
	if err != nil {
		return err
	}
	l := limit.New(p, &limit.Options{Store: sharedLimits(opts.Replicas), Slots: sharedSlots(opts.Replicas),
		Lease: leaseOf(opts.Host.MaxRequestTimeout), Logger: log})
	opts.Limit = l.HTTP
	opts.Middleware = append(opts.Middleware, l.Middleware)
	pol.add(func(files []*config.File) (func(), error) {
		p, err := limitsOf(files)
		return func() { l.Set(p) }, err
	})
	return nil
}

// leaseOf is how long a call's count of calls in flight lasts in the
// store the replicas share, when its replica does not end it (it
// stopped): a little longer than --max-timeout lets a call last.
func leaseOf(maxCall time.Duration) time.Duration {
	if maxCall <= 0 {
		return 0 // the limiter's default
	}
	return maxCall + time.Minute
}
