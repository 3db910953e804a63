package auth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
)

// maxDocument bounds a metadata document or a registration answer.
const maxDocument = 1 << 20

// statusError is an HTTP answer other than the one expected.
type statusError struct {
	url    string
	status int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("GET %s answered %d %s", e.url, e.status, http.StatusText(e.status))
}

// getJSON fetches a JSON document into v. A status other than 200 is a
// *statusError.
func getJSON(ctx context.Context, hc *http.Client, target string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return bare(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return &statusError{url: target, status: resp.StatusCode}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return err
	}
	if len(b) > maxDocument {
		return fmt.Errorf("%s is larger than %d bytes", target, maxDocument)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s is not the JSON document expected: %w", target, err)
	}
	return nil
}

// postJSON posts body as JSON and decodes a 200 or 201 answer into v. An
// OAuth error answer becomes a *TokenError of endpoint.
func postJSON(ctx context.Context, hc *http.Client, endpoint, target string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return bare(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		json.Unmarshal(raw, &e)
		if e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return &TokenError{Endpoint: endpoint, Status: resp.StatusCode, Code: e.Error, Description: e.Description}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("the %s answer is not the JSON expected: %w", endpoint, err)
	}
	return nil
}

// isLoopback reports whether host (without port) names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// checkURL refuses an address the client must not send credentials or
// users to: anything but https, or http to this machine, unless
// insecure allows http anywhere (RFC 8252 §8.3, OAuth 2.1 §1.5).
func checkURL(what, raw string, insecure bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("auth: the %s %q: %w", what, raw, err)
	}
	switch {
	case u.Host == "":
		return fmt.Errorf("auth: the %s %q is not an absolute URL", what, raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && (insecure || isLoopback(u.Hostname())):
		return nil
	}
	return fmt.Errorf("auth: the %s %q is not an https URL", what, raw)
}
