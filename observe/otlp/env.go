package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrNoEndpoint is what [OptionsFromEnv] returns when no variable says
// where to export to.
var ErrNoEndpoint = errors.New("otlp: neither OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT is set")

// OptionsFromEnv reads the variables of the OTLP exporter specification
// for traces through getenv (os.Getenv, or a lookup of a test's own). For
// each setting the variable of the traces signal wins over the general
// one:
//
//   - OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the URL as it is, or
//     OTEL_EXPORTER_OTLP_ENDPOINT, a base URL to which "v1/traces" is
//     added (ErrNoEndpoint without either);
//   - OTEL_EXPORTER_OTLP_[TRACES_]HEADERS: key=value pairs separated by
//     commas, values percent-decoded;
//   - OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT: milliseconds;
//   - OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION: gzip or none;
//   - OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL: http/protobuf, the only one
//     this exporter speaks (grpc and http/json are refused, not ignored);
//   - OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE, CLIENT_CERTIFICATE and
//     CLIENT_KEY: PEM files for TLS.
//
// Errors name the variable, never a header's value.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	get := func(name string) (string, string) {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return v, "OTEL_EXPORTER_OTLP_TRACES_" + name
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name)), "OTEL_EXPORTER_OTLP_" + name
	}
	var o Options
	var err error
	if o.Endpoint, err = endpointFromEnv(getenv); err != nil {
		return Options{}, err
	}
	if v, name := get("PROTOCOL"); v != "" && v != "http/protobuf" {
		return Options{}, fmt.Errorf("otlp: %s=%s: ferry exports traces over http/protobuf only", name, v)
	}
	if v, name := get("HEADERS"); v != "" {
		if o.Headers, err = parseHeaders(v); err != nil {
			return Options{}, fmt.Errorf("otlp: %s: %w", name, err)
		}
	}
	if v, name := get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return Options{}, fmt.Errorf("otlp: %s=%s: not a number of milliseconds", name, v)
		}
		o.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch v, name := get("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		o.Gzip = true
	default:
		return Options{}, fmt.Errorf("otlp: %s=%s: gzip or none", name, v)
	}
	if o.Client, err = clientFromEnv(get); err != nil {
		return Options{}, err
	}
	return o, nil
}

func endpointFromEnv(getenv func(string) string) (string, error) {
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		return v, nil
	}
	base := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if base == "" {
		return "", ErrNoEndpoint
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: %s", redact(base))
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	return u.String(), nil
}

// parseHeaders reads the W3C Baggage-like list the specification uses:
// key=value, comma-separated, spaces around each trimmed, the value
// percent-decoded.
func parseHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	for i, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not key=value", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %s is not percent-encoded right", k)
		}
		h[http.CanonicalHeaderKey(k)] = dv
	}
	return h, nil
}

// clientFromEnv returns a client with the TLS files the variables name,
// or nil (the exporter's default) when they name none.
func clientFromEnv(get func(string) (string, string)) (*http.Client, error) {
	ca, caName := get("CERTIFICATE")
	cert, certName := get("CLIENT_CERTIFICATE")
	key, keyName := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("otlp: %s: %w", caName, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("otlp: %s: %s holds no PEM certificate", caName, ca)
		}
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("otlp: %s and %s: %w", certName, keyName, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	t := newTransport()
	t.TLSClientConfig = cfg
	return &http.Client{Transport: t}, nil
}
