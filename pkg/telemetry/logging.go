package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// LogConfig configures NewLogger.
type LogConfig struct {
	// Level is debug, info (default), warn or error.
	Level string
	// Format is text (default) or json.
	Format string
}

// NewLogger returns a slog logger writing to w whose records carry the
// trace_id and span_id of the context they are logged with (use the
// *Context logging methods).
func NewLogger(w io.Writer, cfg LogConfig) (*slog.Logger, error) {
	var level slog.Level
	switch strings.ToLower(cfg.Level) {
	case "", "info":
		level = slog.LevelInfo
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, fmt.Errorf("telemetry: LogConfig.Level %q is not debug, info, warn or error", cfg.Level)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch strings.ToLower(cfg.Format) {
	case "", "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("telemetry: LogConfig.Format %q is not text or json", cfg.Format)
	}
	return slog.New(traceHandler{h}), nil
}

// traceHandler adds the context's trace and span ids to each record.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}

// LogJob is the log attribute of a job id.
func LogJob(id string) slog.Attr { return slog.String("job", id) }

// LogPartition is the log attribute of a partition index.
func LogPartition(i int) slog.Attr { return slog.Int("partition", i) }

// LogAttempt is the log attribute of a delivery attempt.
func LogAttempt(n int) slog.Attr { return slog.Int("attempt", n) }
