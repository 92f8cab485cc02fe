package telemetry

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// HeaderCarrier adapts NATS message headers to OpenTelemetry propagation.
//
// Get matches keys case-insensitively: some NATS servers (2.11–2.12)
// lower-cased the traceparent header, and other clients may canonicalize it
// differently, so an exact-case lookup would silently start a new trace.
type HeaderCarrier nats.Header

var _ propagation.TextMapCarrier = HeaderCarrier(nil)

// Get returns the first value of key, matched case-insensitively.
func (c HeaderCarrier) Get(key string) string {
	if v, ok := c[key]; ok && len(v) > 0 {
		return v[0]
	}
	for k, v := range c {
		if strings.EqualFold(k, key) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// Set replaces key's values (exact case, as the propagator writes it) and
// drops other spellings of the same key.
func (c HeaderCarrier) Set(key, value string) {
	for k := range c {
		if k != key && strings.EqualFold(k, key) {
			delete(c, k)
		}
	}
	c[key] = []string{value}
}

// Keys lists the header keys.
func (c HeaderCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// InjectNATS writes ctx's trace context into h with the global propagator.
// h must be non-nil.
func InjectNATS(ctx context.Context, h nats.Header) {
	otel.GetTextMapPropagator().Inject(ctx, HeaderCarrier(h))
}

// ExtractNATS returns ctx extended with the remote trace context found in h,
// if any.
func ExtractNATS(ctx context.Context, h nats.Header) context.Context {
	if h == nil {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, HeaderCarrier(h))
}
