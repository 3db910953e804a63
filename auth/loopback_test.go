package auth

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestLoopbackIgnoresForgedCallbacks: any page or program on this
// machine can send a request to the loopback redirect URI. Those that do
// not carry the state of the authorization request are answered 400 and
// the login goes on waiting; only the response with the state ends it,
// be it a code or an error.
func TestLoopbackIgnoresForgedCallbacks(t *testing.T) {
	tests := []struct {
		name     string
		forged   []string // queries sent first, each to be refused
		real     string   // then the authorization server's redirect
		wantCode string
		wantErr  string
	}{
		{"code after forgeries", []string{"code=forged&state=wrong", "code=forged", "code=forged&state="}, "code=c&state=s3cret&iss=i", "c", ""},
		{"error after a forged error", []string{"error=access_denied&state=wrong"}, "error=access_denied&state=s3cret", "", "access_denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			redirect, err := freeLoopbackURL()
			if err != nil {
				t.Fatal(err)
			}
			statuses := make(chan []int, 1)
			authorize := Loopback(func(ctx context.Context, authURL string) error {
				go func() {
					var got []int
					for _, q := range append(tt.forged, tt.real) {
						got = append(got, callback(ctx, redirect+"?"+q))
					}
					statuses <- got
				}()
				return nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			q, err := authorize(ctx, "https://as.example.com/authorize?state=s3cret", redirect)
			if err != nil {
				t.Fatal(err)
			}
			if q.Get("code") != tt.wantCode || q.Get("error") != tt.wantErr || q.Get("state") != "s3cret" {
				t.Fatalf("the login ended with %v, want code %q error %q", q, tt.wantCode, tt.wantErr)
			}
			got := <-statuses
			for i := range tt.forged {
				if got[i] != http.StatusBadRequest {
					t.Errorf("the forged callback %q was answered %d, want 400", tt.forged[i], got[i])
				}
			}
			if last := got[len(got)-1]; last != http.StatusOK {
				t.Errorf("the real callback was answered %d, want 200", last)
			}
		})
	}
}

// callback plays the browser sent to the redirect URI; it returns the
// status of the answer (0 when there was none).
func callback(ctx context.Context, target string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
