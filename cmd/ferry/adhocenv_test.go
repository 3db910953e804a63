package main

import (
	"maps"
	"strings"
	"testing"
)

// TestAdhocEnv: --env K=V sets K, --env K passes ferry's own K on (a
// secret then stays off the command line), and what is neither is a
// clear usage error.
func TestAdhocEnv(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"API_KEY": "sk-1", "EMPTY": ""}[k]
		return v, ok
	}
	for _, tc := range []struct {
		flags   []string
		want    map[string]string
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"A=1", "B=x=y", "C="}, map[string]string{"A": "1", "B": "x=y", "C": ""}, ""},
		{[]string{"API_KEY", "EMPTY"}, map[string]string{"API_KEY": "sk-1", "EMPTY": ""}, ""},
		{[]string{"API_KEY", "API_KEY=over"}, map[string]string{"API_KEY": "over"}, ""},
		{[]string{"MISSING"}, nil, "MISSING is not set in ferry's environment"},
		{[]string{"=1"}, nil, `--env "=1": want K=V or K`},
	} {
		got, err := adhocEnv(tc.flags, lookup)
		if tc.wantErr != "" {
			if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.flags, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.flags, got, err, tc.want)
		}
	}
}
