package singlenode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Span is one span of a trace read back from Jaeger.
type Span struct {
	SpanID   string
	ParentID string // "" for a root
	Name     string
	Service  string
	Start    time.Time
	Duration time.Duration
	// Tags are the span's attributes, as text.
	Tags map[string]string
	// Error is true when the span has the error tag.
	Error bool
}

// Trace is a trace read back from Jaeger's query API.
type Trace struct {
	TraceID string
	Spans   []Span
}

// ErrTraceNotFound: Jaeger has no trace of that id (yet).
var ErrTraceNotFound = errors.New("jaeger: trace not found")

// jaegerTraces is the subset of GET /api/traces/{id}'s answer we read.
type jaegerTraces struct {
	Data []struct {
		TraceID string `json:"traceID"`
		Spans   []struct {
			SpanID        string `json:"spanID"`
			OperationName string `json:"operationName"`
			References    []struct {
				RefType string `json:"refType"`
				SpanID  string `json:"spanID"`
			} `json:"references"`
			StartTime int64 `json:"startTime"` // µs since the epoch
			Duration  int64 `json:"duration"`  // µs
			Tags      []struct {
				Key   string `json:"key"`
				Value any    `json:"value"`
			} `json:"tags"`
			ProcessID string `json:"processID"`
		} `json:"spans"`
		Processes map[string]struct {
			ServiceName string `json:"serviceName"`
		} `json:"processes"`
	} `json:"data"`
	Errors []struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"errors"`
}

// MaxTraceBytes bounds the answer FetchTrace reads.
const MaxTraceBytes = 64 << 20

// FetchTrace reads a trace from Jaeger's query API at base
// (http://host:16686). A trace Jaeger does not have (yet) is
// ErrTraceNotFound.
func FetchTrace(ctx context.Context, base, traceID string) (*Trace, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/traces/"+traceID, nil)
	if err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jaeger: query %s: %w", traceID, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxTraceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jaeger: query %s: %w", traceID, err)
	}
	if len(body) > MaxTraceBytes {
		return nil, fmt.Errorf("jaeger: query %s: answer exceeds %d bytes", traceID, MaxTraceBytes)
	}
	if res.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %s", ErrTraceNotFound, traceID)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaeger: query %s: HTTP %d: %s", traceID, res.StatusCode, lastLines(string(body), 3))
	}
	return ParseTrace(body)
}

// ParseTrace decodes an answer of GET /api/traces/{id}.
func ParseTrace(body []byte) (*Trace, error) {
	var jt jaegerTraces
	if err := json.Unmarshal(body, &jt); err != nil {
		return nil, fmt.Errorf("jaeger: trace JSON: %w", err)
	}
	if len(jt.Data) == 0 {
		if len(jt.Errors) > 0 {
			return nil, fmt.Errorf("%w: %s", ErrTraceNotFound, jt.Errors[0].Msg)
		}
		return nil, ErrTraceNotFound
	}
	d := jt.Data[0]
	t := &Trace{TraceID: d.TraceID}
	for _, s := range d.Spans {
		sp := Span{SpanID: s.SpanID, Name: s.OperationName, Service: d.Processes[s.ProcessID].ServiceName,
			Start: time.UnixMicro(s.StartTime), Duration: time.Duration(s.Duration) * time.Microsecond,
			Tags: map[string]string{}}
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" || sp.ParentID == "" {
				sp.ParentID = r.SpanID
			}
		}
		for _, tag := range s.Tags {
			sp.Tags[tag.Key] = fmt.Sprint(tag.Value)
			if tag.Key == "error" && fmt.Sprint(tag.Value) == "true" {
				sp.Error = true
			}
		}
		t.Spans = append(t.Spans, sp)
	}
	return t, nil
}

// Names counts the spans by name.
func (t *Trace) Names() map[string]int {
	m := map[string]int{}
	for _, s := range t.Spans {
		m[s.Name]++
	}
	return m
}

// Services lists the services that sent spans, sorted.
func (t *Trace) Services() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range t.Spans {
		if !seen[s.Service] {
			seen[s.Service] = true
			out = append(out, s.Service)
		}
	}
	sort.Strings(out)
	return out
}

// WaitForTrace polls Jaeger (spans arrive in batches) until the trace has
// every span named in want, at least as many as asked, or ctx ends; it
// returns the last trace read.
func WaitForTrace(ctx context.Context, base, traceID string, want map[string]int) (*Trace, error) {
	var last *Trace
	var lastErr error
	for {
		t, err := FetchTrace(ctx, base, traceID)
		if err == nil {
			last, lastErr = t, nil
			if complete(t, want) {
				return t, nil
			}
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return last, fmt.Errorf("jaeger: trace %s is missing spans: have %v, want %v", traceID, last.Names(), want)
			}
			return nil, fmt.Errorf("jaeger: trace %s: %w (last error: %v)", traceID, ctx.Err(), lastErr)
		case <-time.After(250 * time.Millisecond): // poll interval of the query API
		}
	}
}

func complete(t *Trace, want map[string]int) bool {
	have := t.Names()
	for name, n := range want {
		if have[name] < n {
			return false
		}
	}
	return true
}

// Waterfall writes the trace as a text waterfall: spans in tree order
// (children under their parent, by start time) with their service, offset,
// duration, a bar on the trace's time axis and the attributes that say
// which job, partition, attempt, device or lock a span is about.
func Waterfall(w io.Writer, t *Trace) {
	if len(t.Spans) == 0 {
		fmt.Fprintf(w, "trace %s: no spans\n", t.TraceID)
		return
	}
	spans := append([]Span(nil), t.Spans...)
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	start, end := spans[0].Start, spans[0].Start
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
		if e := s.Start.Add(s.Duration); e.After(end) {
			end = e
		}
	}
	total := end.Sub(start)
	children := map[string][]Span{}
	var roots []Span
	for _, s := range spans {
		if s.ParentID == "" || !ids[s.ParentID] {
			roots = append(roots, s)
		} else {
			children[s.ParentID] = append(children[s.ParentID], s)
		}
	}
	const barWidth = 40
	fmt.Fprintf(w, "trace %s: %d spans over %s\n", t.TraceID, len(spans), total.Round(time.Millisecond))
	fmt.Fprintf(w, "%-15s %-30s %10s %10s  %s\n", "SERVICE", "SPAN", "START", "DURATION", "TIMELINE")
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		name := strings.Repeat("  ", depth) + s.Name
		if len(name) > 30 {
			name = name[:29] + "…"
		}
		off := s.Start.Sub(start)
		bar := make([]rune, barWidth)
		for i := range bar {
			bar[i] = ' '
		}
		if total > 0 {
			a := int(float64(off) / float64(total) * barWidth)
			b := int(float64(off+s.Duration) / float64(total) * barWidth)
			if b <= a {
				b = a + 1
			}
			for i := max(a, 0); i < min(b, barWidth); i++ {
				bar[i] = '█'
			}
		}
		mark := ""
		if s.Error {
			mark = " ERROR"
		}
		fmt.Fprintf(w, "%-15s %-30s %9.3fs %9.3fs  |%s|%s%s\n", truncate(s.Service, 15), name, off.Seconds(), s.Duration.Seconds(),
			string(bar), describe(s), mark)
		for _, c := range children[s.SpanID] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
}

// describe picks the attributes worth a glance.
func describe(s Span) string {
	var parts []string
	for _, k := range []struct{ key, label string }{
		{"c2.partition", "partition"}, {"c2.attempt", "attempt"}, {"c2.worker", "worker"},
		{"c2.device", "device"}, {"c2.lock", "lock"},
	} {
		if v, ok := s.Tags[k.key]; ok {
			parts = append(parts, k.label+"="+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
