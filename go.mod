module github.com/ferrymcp/ferry

go 1.26

require (
	github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/yosida95/uritemplate/v3 v3.0.2
	golang.org/x/text v0.14.0
)

require golang.org/x/sys v0.41.0
