package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/c2cluster/c2cluster/pkg/telemetry"
)

// MaxTraceBytes bounds the Jaeger answer FetchTrace reads.
const MaxTraceBytes = 32 << 20

// ErrTraceNotFound: Jaeger has no trace of that id (yet).
var ErrTraceNotFound = errors.New("jaeger: trace not found")

// Span kinds of the waterfall, each with its own colour on the page.
const (
	KindCoordinator = "coordinator" // submit, job, publish partition, assemble
	KindPartition   = "partition"   // a worker's partition attempt
	KindCPU         = "cpu"         // synthesize
	KindLockWait    = "lock-wait"   // interlock.wait: waiting for a device lock
	KindGPU         = "gpu"         // prepare, gpu.upload, gpu.compute, epilogue
	KindVerify      = "verify"      // verify
	KindClient      = "client"      // anything else: Redis and other client calls
)

// Trace is a trace as the page draws it: spans in tree order (each parent
// before its children, siblings by start time), times in microseconds from
// the trace's first span.
type Trace struct {
	TraceID string `json:"trace_id"`
	// StartUnixUS is the first span's start, µs since the epoch.
	StartUnixUS int64 `json:"start_unix_us"`
	// DurationUS is from the first span's start to the last span's end.
	DurationUS int64    `json:"duration_us"`
	Services   []string `json:"services"`
	Spans      []Span   `json:"spans"`
	// Partitions summarizes the partition spans: one entry per partition
	// seen, by index.
	Partitions []PartitionAttempts `json:"partitions"`
	// LockWaitUS is the time spent in interlock.wait spans, summed.
	LockWaitUS int64 `json:"lock_wait_us"`
	// JaegerURL is the trace in Jaeger's UI, when one is configured.
	JaegerURL string `json:"jaeger_url,omitempty"`
}

// Span is one span of a Trace.
type Span struct {
	SpanID   string `json:"span_id"`
	ParentID string `json:"parent_id,omitempty"` // "" for a root or a parent not in the trace
	// ParentMissing: the span has a parent that is not in the trace (yet:
	// a span is exported when it ends, so a running parent comes later).
	ParentMissing bool   `json:"parent_missing,omitempty"`
	Name          string `json:"name"`
	Service       string `json:"service"`
	Kind          string `json:"kind"` // Kind*
	Depth         int    `json:"depth"`
	// StartUS is the offset from the trace's start.
	StartUS    int64 `json:"start_us"`
	DurationUS int64 `json:"duration_us"`
	Error      bool  `json:"error"`
	// Attrs are the span's attributes as text, sorted by key.
	Attrs []Attr `json:"attrs"`
	// Events are the span's events (Jaeger's logs), e.g. a recorded error.
	Events []Event `json:"events,omitempty"`
}

// Attr is one attribute of a span or an event.
type Attr struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Event is one event of a span.
type Event struct {
	// AtUS is the offset from the trace's start.
	AtUS  int64  `json:"at_us"`
	Attrs []Attr `json:"attrs"`
}

// PartitionAttempts is what the trace says about one partition: how many
// attempts ended (their partition spans) and how the last one ended.
type PartitionAttempts struct {
	Partition int    `json:"partition"`
	Attempts  int    `json:"attempts"`
	Worker    string `json:"worker,omitempty"` // of the last attempt
	Device    string `json:"device,omitempty"`
	// OK: the last attempt's span ended without an error.
	OK         bool  `json:"ok"`
	DurationUS int64 `json:"duration_us"` // of the last attempt
}

// Attr returns the value of the span's attribute key ("" when absent).
func (s *Span) Attr(key string) string {
	for _, a := range s.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// jaegerTraces is the part of GET /api/traces/{id}'s answer read here.
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
			StartTime int64       `json:"startTime"` // µs since the epoch
			Duration  int64       `json:"duration"`  // µs
			Tags      []jaegerTag `json:"tags"`
			Logs      []struct {
				Timestamp int64       `json:"timestamp"`
				Fields    []jaegerTag `json:"fields"`
			} `json:"logs"`
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

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func attrs(tags []jaegerTag) []Attr {
	out := make([]Attr, 0, len(tags))
	for _, t := range tags {
		var v string
		switch x := t.Value.(type) {
		case string:
			v = x
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			v = fmt.Sprint(x)
		}
		out = append(out, Attr{Key: t.Key, Value: v})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// FetchTrace reads a trace from Jaeger's HTTP query API at base
// (http://host:16686). A trace Jaeger does not have (yet) is
// ErrTraceNotFound.
func FetchTrace(ctx context.Context, client *http.Client, base, traceID string) (*Trace, error) {
	if err := checkTraceID(traceID); err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/traces/"+traceID, nil)
	if err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jaeger query API at %s: %w", base, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxTraceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jaeger query API at %s: %w", base, err)
	}
	if len(body) > MaxTraceBytes {
		return nil, fmt.Errorf("jaeger query API at %s: trace %s exceeds %d bytes", base, traceID, MaxTraceBytes)
	}
	if res.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %s", ErrTraceNotFound, traceID)
	}
	if res.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fmt.Errorf("jaeger query API at %s: trace %s: HTTP %d: %s", base, traceID, res.StatusCode, msg)
	}
	return ParseTrace(body)
}

// ParseTrace converts an answer of Jaeger's GET /api/traces/{id}.
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
	t := &Trace{TraceID: d.TraceID, Services: []string{}, Spans: []Span{}, Partitions: []PartitionAttempts{}}
	if len(d.Spans) == 0 {
		return t, nil
	}
	start, end := d.Spans[0].StartTime, d.Spans[0].StartTime
	for _, s := range d.Spans {
		start = min(start, s.StartTime)
		end = max(end, s.StartTime+s.Duration)
	}
	t.StartUnixUS, t.DurationUS = start, end-start
	spans := make([]Span, 0, len(d.Spans))
	services := map[string]bool{}
	for _, s := range d.Spans {
		sp := Span{SpanID: s.SpanID, Name: s.OperationName, Service: d.Processes[s.ProcessID].ServiceName,
			StartUS: s.StartTime - start, DurationUS: s.Duration, Attrs: attrs(s.Tags)}
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" || sp.ParentID == "" {
				sp.ParentID = r.SpanID
			}
		}
		for _, a := range sp.Attrs {
			if a.Key == "error" && a.Value == "true" || a.Key == "otel.status_code" && a.Value == "ERROR" {
				sp.Error = true
			}
		}
		for _, l := range s.Logs {
			sp.Events = append(sp.Events, Event{AtUS: l.Timestamp - start, Attrs: attrs(l.Fields)})
		}
		sp.Kind = kindOf(sp.Name)
		services[sp.Service] = true
		spans = append(spans, sp)
	}
	for s := range services {
		t.Services = append(t.Services, s)
	}
	sort.Strings(t.Services)
	t.Spans = treeOrder(spans)
	t.Partitions = partitionAttempts(t.Spans)
	for _, s := range t.Spans {
		if s.Kind == KindLockWait {
			t.LockWaitUS += s.DurationUS
		}
	}
	return t, nil
}

func kindOf(name string) string {
	switch name {
	case telemetry.SpanSubmit, telemetry.SpanJob, telemetry.SpanPublish, telemetry.SpanAssemble:
		return KindCoordinator
	case telemetry.SpanPartition:
		return KindPartition
	case telemetry.SpanSynthesize:
		return KindCPU
	case telemetry.SpanInterlockWait:
		return KindLockWait
	case "prepare", telemetry.SpanGPUUpload, telemetry.SpanGPUCompute, telemetry.SpanEpilogue:
		return KindGPU
	case telemetry.SpanVerify:
		return KindVerify
	}
	return KindClient
}

// treeOrder orders spans depth first: roots and each span's children by
// start time (then name), and sets Depth. A span whose parent is not in
// the trace is a root; a reference cycle cannot hide spans.
func treeOrder(spans []Span) []Span {
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].StartUS != spans[j].StartUS {
			return spans[i].StartUS < spans[j].StartUS
		}
		return spans[i].Name < spans[j].Name
	})
	ids := make(map[string]bool, len(spans))
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	children := map[string][]int{}
	var roots []int
	for i, s := range spans {
		if s.ParentID == "" || s.ParentID == s.SpanID || !ids[s.ParentID] {
			spans[i].ParentMissing = s.ParentID != "" && s.ParentID != s.SpanID
			spans[i].ParentID = ""
			roots = append(roots, i)
		} else {
			children[s.ParentID] = append(children[s.ParentID], i)
		}
	}
	out := make([]Span, 0, len(spans))
	seen := make([]bool, len(spans))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if seen[i] {
			return
		}
		seen[i] = true
		s := spans[i]
		s.Depth = depth
		out = append(out, s)
		for _, c := range children[s.SpanID] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	for i := range spans { // in a cycle: shown as roots
		if !seen[i] {
			spans[i].ParentID = ""
			walk(i, 0)
		}
	}
	return out
}

// partitionAttempts summarizes the partition spans by partition index; the
// last attempt is the one with the highest c2.attempt, then the latest.
func partitionAttempts(spans []Span) []PartitionAttempts {
	type last struct {
		attempt int
		span    *Span
	}
	byPart := map[int]*PartitionAttempts{}
	lasts := map[int]last{}
	for i := range spans {
		s := &spans[i]
		if s.Kind != KindPartition {
			continue
		}
		p, err := strconv.Atoi(s.Attr(string(telemetry.AttrPartition)))
		if err != nil {
			continue
		}
		a, _ := strconv.Atoi(s.Attr(string(telemetry.AttrAttempt)))
		pa := byPart[p]
		if pa == nil {
			pa = &PartitionAttempts{Partition: p}
			byPart[p] = pa
		}
		pa.Attempts++
		if l, ok := lasts[p]; !ok || a > l.attempt || a == l.attempt && s.StartUS >= l.span.StartUS {
			lasts[p] = last{attempt: a, span: s}
		}
	}
	out := make([]PartitionAttempts, 0, len(byPart))
	for p, pa := range byPart {
		s := lasts[p].span
		pa.Worker, pa.Device = s.Attr(string(telemetry.AttrWorker)), s.Attr(string(telemetry.AttrDevice))
		pa.OK, pa.DurationUS = !s.Error, s.DurationUS
		out = append(out, *pa)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}
