module github.com/ferrymcp/ferry

go 1.26

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/yosida95/uritemplate/v3 v3.0.2
	golang.org/x/oauth2 v0.36.0
	golang.org/x/text v0.14.0
)

require golang.org/x/sys v0.41.0
