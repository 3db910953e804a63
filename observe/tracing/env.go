package tracing

import (
	"context"
	"errors"
	"os"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ferrymcp/ferry/observe/otlp"
)

// TracerProviderFromEnv returns an OpenTelemetry tracer provider that
// exports spans over OTLP/HTTP as the standard variables say
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, ...; see
// [otlp.OptionsFromEnv]), and the function that flushes and stops it; nil
// when neither endpoint is set (or OTEL_TRACES_EXPORTER is "none").
func TracerProviderFromEnv(ctx context.Context, service string) (*sdktrace.TracerProvider, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, none, nil
	}
	opts, err := otlp.OptionsFromEnv(os.Getenv)
	if errors.Is(err, otlp.ErrNoEndpoint) {
		return nil, none, nil
	}
	if err != nil {
		return nil, nil, err
	}
	exp, err := otlp.New(opts)
	if err != nil {
		return nil, nil, err
	}
	if s := os.Getenv("OTEL_SERVICE_NAME"); s != "" {
		service = s
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
