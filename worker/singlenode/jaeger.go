package singlenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// JaegerConfig is where a Jaeger listens. Every address is host:port; the
// defaults are Jaeger's usual ports on the loopback interface only.
type JaegerConfig struct {
	// Binary is the jaeger executable (built from tools/jaeger).
	Binary string
	// Dir holds the generated configuration and the log.
	Dir string
	// OTLPGRPC receives spans over OTLP/gRPC. Default 127.0.0.1:4317.
	OTLPGRPC string
	// OTLPHTTP receives spans over OTLP/HTTP. Default 127.0.0.1:4318.
	OTLPHTTP string
	// QueryHTTP serves the query API (/api/traces/…). Default
	// 127.0.0.1:16686.
	QueryHTTP string
	// QueryGRPC serves the query API over gRPC. Default 127.0.0.1:16685.
	QueryGRPC string
	// Health serves the health check. Default 127.0.0.1:13133.
	Health string
}

func (c *JaegerConfig) defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.OTLPGRPC, "127.0.0.1:4317")
	def(&c.OTLPHTTP, "127.0.0.1:4318")
	def(&c.QueryHTTP, "127.0.0.1:16686")
	def(&c.QueryGRPC, "127.0.0.1:16685")
	def(&c.Health, "127.0.0.1:13133")
}

// jaegerYAML is Jaeger v2's (OpenTelemetry Collector) configuration: OTLP
// in, memory storage, the query API; every listener explicit (Jaeger's own
// defaults bind some ports on all interfaces), no internal metrics port.
const jaegerYAML = `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    resource:
      service.name: jaeger
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: {{health}}
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: {{query_http}}
    grpc:
      endpoint: {{query_grpc}}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: {{otlp_grpc}}
      http:
        endpoint: {{otlp_http}}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// JaegerConfigYAML renders the configuration StartJaeger runs Jaeger with.
func JaegerConfigYAML(c JaegerConfig) string {
	c.defaults()
	return strings.NewReplacer("{{health}}", c.Health, "{{query_http}}", c.QueryHTTP, "{{query_grpc}}", c.QueryGRPC,
		"{{otlp_grpc}}", c.OTLPGRPC, "{{otlp_http}}", c.OTLPHTTP).Replace(jaegerYAML)
}

// Jaeger is a Jaeger the single node (or a test) sends spans to.
type Jaeger struct {
	// OTLPEndpoint is the OTLP/gRPC host:port for telemetry.TracingConfig.
	OTLPEndpoint string
	// QueryURL is the base URL of the query API (http://host:16686).
	QueryURL string
	// UI is the base URL of Jaeger's web UI, "" when this Jaeger has none
	// (the one built from tools/jaeger serves a placeholder page).
	UI   string
	proc *child // the Jaeger this process started; nil for a shared one
}

// uiPlaceholder is what a Jaeger built without its UI assets serves at /.
const uiPlaceholder = "This is not the Jaeger UI you are looking for"

// hasUI reports whether the Jaeger at base serves its web UI at /.
func hasUI(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	if err != nil {
		return false
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return err == nil && res.StatusCode == http.StatusOK && !strings.Contains(string(b), uiPlaceholder)
}

// queryReady reports whether a Jaeger query API answers at base.
func queryReady(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/services", nil)
	if err != nil {
		return false
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode == http.StatusOK
}

// StartJaeger runs cfg.Binary with the loopback configuration of cfg
// (written to cfg.Dir/jaeger.yaml, log in cfg.Dir/jaeger.log) and waits
// until its query API answers. Stop ends it.
func StartJaeger(ctx context.Context, cfg JaegerConfig) (*Jaeger, error) {
	cfg.defaults()
	if cfg.Binary == "" || cfg.Dir == "" {
		return nil, errors.New("jaeger: JaegerConfig.Binary and Dir are required")
	}
	for _, a := range []string{cfg.OTLPGRPC, cfg.OTLPHTTP, cfg.QueryHTTP, cfg.QueryGRPC, cfg.Health} {
		if !portFree(a) {
			return nil, fmt.Errorf("jaeger: address %s is in use", a)
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	confPath := filepath.Join(cfg.Dir, "jaeger.yaml")
	if err := os.WriteFile(confPath, []byte(JaegerConfigYAML(cfg)), 0o644); err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	logPath := filepath.Join(cfg.Dir, "jaeger.log")
	proc, err := startChild(cfg.Binary, []string{"--config", "file:" + confPath}, logPath)
	if err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	j := &Jaeger{OTLPEndpoint: cfg.OTLPGRPC, QueryURL: "http://" + cfg.QueryHTTP, proc: proc}
	deadline := time.Now().Add(60 * time.Second)
	for !queryReady(ctx, j.QueryURL) {
		if exited, err := j.proc.exited(); exited {
			tail, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("jaeger: exited at start (%v): %s", err, lastLines(string(tail), 10))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			j.Stop()
			return nil, fmt.Errorf("jaeger: query API at %s did not answer within 60s (log: %s)", j.QueryURL, logPath)
		}
		time.Sleep(100 * time.Millisecond) // poll interval while Jaeger boots
	}
	return j, nil
}

// Stop ends a Jaeger this process started; a shared one is left alone.
func (j *Jaeger) Stop() {
	if j != nil {
		j.proc.stop()
	}
}

// ErrJaegerUnbuildable: Jaeger cannot be built here (no Go toolchain, or no
// module proxy and no cached modules).
var ErrJaegerUnbuildable = errors.New("jaeger: cannot be built here")

// BuildJaeger returns the cached Jaeger binary of the repository at root,
// building it first with scripts/build-jaeger.sh when absent (about 6.5 min
// on 2 cores; its progress goes to progress). A build that is impossible
// here is ErrJaegerUnbuildable.
func BuildJaeger(ctx context.Context, root string, progress io.Writer) (string, error) {
	script := filepath.Join(root, "scripts", "build-jaeger.sh")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrJaegerUnbuildable, script, err)
	}
	var out strings.Builder
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout, cmd.Stderr = &out, progress
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return "", fmt.Errorf("%w (see the lines above)", ErrJaegerUnbuildable)
	case err != nil:
		return "", fmt.Errorf("jaeger: %s: %w", script, err)
	}
	path := strings.TrimSpace(out.String())
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return "", fmt.Errorf("jaeger: %s printed %q, which is not a binary", script, path)
	}
	return path, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
