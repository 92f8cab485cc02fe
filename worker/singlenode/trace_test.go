package singlenode

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sample is the shape of Jaeger's GET /api/traces/{id} answer (fields we
// read and a few we ignore), as its query API returns it.
const sample = `{"data":[{"traceID":"383bcfcd40427a46593c454e5aa34274","spans":[
{"traceID":"383bcfcd40427a46593c454e5aa34274","spanID":"a1","operationName":"submit","references":[],
 "startTime":1700000000000000,"duration":6000,"tags":[{"key":"span.kind","type":"string","value":"server"}],"processID":"p1"},
{"traceID":"383bcfcd40427a46593c454e5aa34274","spanID":"b2","operationName":"partition","references":[{"refType":"CHILD_OF","traceID":"383bcfcd40427a46593c454e5aa34274","spanID":"a1"}],
 "startTime":1700000000007000,"duration":2815000,"tags":[{"key":"c2.partition","type":"int64","value":0},{"key":"c2.worker","type":"string","value":"w1"}],"processID":"p2"},
{"traceID":"383bcfcd40427a46593c454e5aa34274","spanID":"c3","operationName":"interlock.wait","references":[{"refType":"CHILD_OF","traceID":"383bcfcd40427a46593c454e5aa34274","spanID":"b2"}],
 "startTime":1700000000100000,"duration":10,"tags":[{"key":"c2.lock","type":"string","value":"compute"},{"key":"error","type":"bool","value":true}],"processID":"p2"}],
"processes":{"p1":{"serviceName":"c2-coordinator","tags":[]},"p2":{"serviceName":"c2-worker","tags":[]}},"warnings":null}],
"total":0,"limit":0,"offset":0,"errors":null}`

func TestParseTraceAndWaterfall(t *testing.T) {
	tr, err := ParseTrace([]byte(sample))
	require.NoError(t, err)
	require.Equal(t, "383bcfcd40427a46593c454e5aa34274", tr.TraceID)
	require.Len(t, tr.Spans, 3)
	require.Equal(t, []string{"c2-coordinator", "c2-worker"}, tr.Services())
	require.Equal(t, map[string]int{"submit": 1, "partition": 1, "interlock.wait": 1}, tr.Names())
	p := tr.Spans[1]
	require.Equal(t, "a1", p.ParentID)
	require.Equal(t, 2815*time.Millisecond, p.Duration)
	require.Equal(t, "0", p.Tags["c2.partition"])
	require.True(t, tr.Spans[2].Error)

	var sb strings.Builder
	Waterfall(&sb, tr)
	out := sb.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 5, out) // title, header, three spans
	require.Contains(t, lines[0], "3 spans over 2.822s")
	require.Contains(t, lines[2], "submit")
	require.Contains(t, lines[3], "  partition")
	require.Contains(t, lines[3], "partition=0 worker=w1")
	require.Contains(t, lines[4], "    interlock.wait")
	require.Contains(t, lines[4], "lock=compute")
	require.Contains(t, lines[4], "ERROR")
	// The partition bar covers almost the whole time line.
	require.Contains(t, lines[3], strings.Repeat("█", 39))

	require.True(t, complete(tr, map[string]int{"partition": 1}))
	require.False(t, complete(tr, map[string]int{"partition": 2}))
}

func TestParseTraceErrors(t *testing.T) {
	_, err := ParseTrace([]byte(`{"data":[],"errors":[{"code":404,"msg":"trace not found"}]}`))
	require.ErrorIs(t, err, ErrTraceNotFound)
	_, err = ParseTrace([]byte(`{"data":`))
	require.ErrorContains(t, err, "trace JSON")
	var sb strings.Builder
	Waterfall(&sb, &Trace{TraceID: "x"})
	require.Equal(t, "trace x: no spans\n", sb.String())
}

func TestJaegerConfigIsLoopbackOnly(t *testing.T) {
	y := JaegerConfigYAML(JaegerConfig{})
	for _, want := range []string{"endpoint: 127.0.0.1:4317", "endpoint: 127.0.0.1:4318", "endpoint: 127.0.0.1:16686",
		"endpoint: 127.0.0.1:16685", "endpoint: 127.0.0.1:13133", "level: none"} {
		require.Contains(t, y, want)
	}
	require.NotContains(t, y, "0.0.0.0")
}

// FuzzParseTrace: whatever the query API answers decodes or fails with an
// error, and the waterfall of what decodes never panics.
func FuzzParseTrace(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"data":[{"traceID":"x","spans":[{"spanID":"a","references":[{"refType":"FOLLOWS_FROM","spanID":"a"}],"duration":-5}]}]}`))
	f.Add([]byte(`{"data":[{"spans":[{"spanID":"a","startTime":9223372036854775807,"duration":9223372036854775807}]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseTrace(b)
		if err != nil {
			return
		}
		var sb strings.Builder
		Waterfall(&sb, tr)
	})
}
