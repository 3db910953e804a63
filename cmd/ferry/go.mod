module github.com/ferrymcp/ferry/cmd/ferry

go 1.26

replace github.com/ferrymcp/ferry => ../..

require (
	github.com/ferrymcp/ferry v0.0.0-00010101000000-000000000000
	github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3
	golang.org/x/term v0.40.0
)

require (
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
