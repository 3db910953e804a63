package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestOAuthKeys(t *testing.T) {
	tests := []struct {
		name, entry string
		want        *OAuth
		err         string
	}{
		{"Claude Code", `{"type":"http","url":"https://x/mcp","oauth":{"clientId":"c1","callbackPort":8080,"scopes":"a b"}}`,
			&OAuth{ClientID: "c1", CallbackPort: 8080, Scopes: []string{"a", "b"}}, ""},
		{"Gemini CLI", `{"httpUrl":"https://x/mcp","oauth":{"enabled":true,"clientId":"c2","clientSecret":"s2","redirectUri":"http://localhost:7777/oauth/callback","scopes":["a"]}}`,
			&OAuth{ClientID: "c2", ClientSecret: "s2", RedirectURI: "http://localhost:7777/oauth/callback", Scopes: []string{"a"}}, ""},
		{"Cursor", `{"url":"https://x/mcp","auth":{"CLIENT_ID":"c3","CLIENT_SECRET":"s3","scopes":["openid","x:read"]}}`,
			&OAuth{ClientID: "c3", ClientSecret: "s3", Scopes: []string{"openid", "x:read"}}, ""},
		{"mcporter's auth is not an object", `{"url":"https://x/mcp","auth":"oauth"}`, nil, ""},
		{"none", `{"url":"https://x/mcp"}`, nil, ""},
		{"bad port", `{"url":"https://x/mcp","oauth":{"callbackPort":"x"}}`, nil, "oauth.callbackPort"},
		{"bad scopes", `{"url":"https://x/mcp","oauth":{"scopes":3}}`, nil, "oauth.scopes"},
		{"not an object", `{"url":"https://x/mcp","oauth":true}`, nil, "oauth"},
		{"client credentials", `{"url":"https://x/mcp","oauth":{"clientId":"gw","clientSecret":"s","grant":"client_credentials","scopes":["a"]}}`,
			&OAuth{ClientID: "gw", ClientSecret: "s", Grant: GrantClientCredentials, Scopes: []string{"a"}}, ""},
		{"token exchange", `{"url":"https://x/mcp","oauth":{"clientId":"gw","clientSecret":"s","grant":"token_exchange","audience":"up"}}`,
			&OAuth{ClientID: "gw", ClientSecret: "s", Grant: GrantTokenExchange, Audience: "up"}, ""},
		{"unknown grant", `{"url":"https://x/mcp","oauth":{"clientId":"gw","clientSecret":"s","grant":"password"}}`, nil, "oauth.grant"},
		{"grant without a secret", `{"url":"https://x/mcp","oauth":{"clientId":"gw","grant":"client_credentials"}}`, nil, "oauth.grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("test.json", []byte(`{"mcpServers":{"s":`+tt.entry+`}}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := f.Servers[0]
			if tt.err != "" {
				if s.Err == nil || !strings.Contains(s.Err.Error(), tt.err) {
					t.Fatalf("error %v, want one about %s", s.Err, tt.err)
				}
				return
			}
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			if !reflect.DeepEqual(s.OAuth, tt.want) {
				t.Fatalf("got %+v, want %+v", s.OAuth, tt.want)
			}
		})
	}
}
