module github.com/ferrymcp/ferry/agent

go 1.26.0

require (
	github.com/ferrymcp/ferry v0.1.0
	github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
