// Package interceptapi is the seam between package intercept and the
// sides that make its requests (package server, package client): what
// they tell an intercept.Request about the request it stands for, read
// only when middleware asks (a tool's name is not decoded for middleware
// that never looks at it). Package intercept fills it in its init;
// server and client get it typed with
//
//	var icp = interceptapi.Get[*intercept.Request]()
//
// (this package cannot import intercept, which imports it).
package interceptapi

import "github.com/go-json-experiment/json/jsontext"

// Source is what the side that made a request knows of it.
type Source interface {
	// Name is the tool or prompt a request names, or the resource's URI.
	Name() string
	// Arguments are a tools/call's arguments as raw JSON.
	Arguments() jsontext.Value
	// ProgressToken is the request's progress token as raw JSON.
	ProgressToken() jsontext.Value
	// Caller is the authenticated caller a received request came from.
	Caller() string
}

// API holds the operations on an intercept.Request (Req) that only the
// sides use.
type API[Req any] struct {
	// Attach makes src what r reports.
	Attach func(r Req, src Source)
	// SourceOf returns what Attach attached, nil for a request that
	// middleware made itself.
	SourceOf func(r Req) Source
}

var api any

// Set is called once, by package intercept's init.
func Set[Req any](a API[Req]) { api = a }

// Get returns the operations, typed.
func Get[Req any]() API[Req] { return api.(API[Req]) }
