// Package otelcol tests ferry's traces against the OpenTelemetry
// Collector's own OTLP receiver (go.opentelemetry.io/collector/receiver/
// otlpreceiver), run in-process on loopback: the built ferry command,
// `ferry serve -- CMD`, exports the gateway's spans over OTLP/HTTP with
// ferry's exporter (observe/otlp), the upstream server behind it exports
// its own, and the receiver must decode both into one trace.
//
// It is a module of its own, outside go.work, so that the collector's
// module graph (gRPC, zap, koanf, ...) stays out of every other module's;
// scripts/test.sh runs it with GOWORK=off.
package otelcol
