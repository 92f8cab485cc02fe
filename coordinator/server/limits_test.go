package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/proto/c2cluster/v1/c2clusterv1connect"
)

// requestBytes reads c2_api_request_bytes_total{stage} from the
// coordinator's registry.
func requestBytes(t *testing.T, co *coordinator, stage string) float64 {
	t.Helper()
	mfs, err := co.srv.Metrics().Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "c2_api_request_bytes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" && l.GetValue() == stage {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestGzipBombStopsAtReadMax: a small gzip body that inflates to 64 MiB is
// decompressed no further than the message limit (ReadMaxBytes) — over
// HTTP/JSON and over gRPC — and refused as resource_exhausted; the
// decompressed bytes the server produced are measured by its own counter.
func TestGzipBombStopsAtReadMax(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{MaxC1Bytes: 1 << 20})
	max := co.srv.ReadMaxBytes()
	require.EqualValues(t, 1<<20*4/3+64<<10, max)

	// HTTP/JSON: a JSON string of 64 MiB of 'A's, gzip-compressed.
	inflated := 64 << 20
	doc := append(append([]byte(`{"c1Json":"`), bytes.Repeat([]byte("A"), inflated)...), `"}`...)
	bomb := gzipped(t, doc)
	t.Logf("HTTP/JSON: %d compressed bytes inflating to %d; limit %d", len(bomb), len(doc), max)
	require.Less(t, len(bomb), 200<<10)
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, co.http.URL+"/c2cluster.v1.ProofService/Submit", bytes.NewReader(bomb))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "%s", body) // resource_exhausted
	require.Contains(t, string(body), "resource_exhausted")
	got := requestBytes(t, co, "decompressed")
	t.Logf("decompressed by the server: %.0f bytes", got)
	require.InDelta(t, float64(max+1), got, 0, "decompressed exactly up to the limit")
	require.InDelta(t, float64(len(bomb)), requestBytes(t, co, "read"), 0, "read the compressed body once")

	// gRPC with gzip: a 64 MiB c1_json of zeros.
	gc := c2clusterv1connect.NewProofServiceClient(h2cClient(), co.http.URL, connect.WithGRPC(), connect.WithSendGzip())
	_, err = gc.Submit(c.ctx, connect.NewRequest(&c2clusterv1.SubmitRequest{C1Json: make([]byte, inflated)}))
	require.Error(t, err)
	require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "%v", err)
	got2 := requestBytes(t, co, "decompressed") - got
	t.Logf("gRPC: decompressed by the server: %.0f bytes", got2)
	require.InDelta(t, float64(max+1), got2, 0)

	jobs, err := c.store.List(c.ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, jobs, "nothing recorded")
}

// h2cClient speaks HTTP/2 without TLS, as gRPC clients of a plain-text
// port do.
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}

// TestC1OverItsShapeLimit: a test-mini C1 output padded past its shape's
// limit — far below MaxC1Bytes — is refused at submit naming the shape and
// its limit, and nothing is stored for workers to download.
func TestC1OverItsShapeLimit(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	doc := sealedC1(t, 11)
	s, err := porep.ShapeByName(testShape)
	require.NoError(t, err)
	limit := c1.MaxBytes(s)
	padded := append(bytes.Repeat([]byte("\n"), int(limit)), doc...)
	require.Less(t, int64(len(padded)), int64(server.MaxC1BytesDefault)/100)
	_, err = co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: padded})
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, fmt.Sprintf("a C1 output of shape %s (%s) has at most %d bytes", testShape, s.RegisteredProof, limit))
	jobs, err := c.store.List(c.ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, jobs)
	depth, err := c.q.Depth(c.ctx)
	require.NoError(t, err)
	require.Empty(t, depth)
}

// postJSON posts a raw HTTP/JSON request and returns the Connect error
// code and message ("" when it succeeded) and the body.
func postJSON(t *testing.T, co *coordinator, method, body string) (code, msg string) {
	t.Helper()
	res, err := http.Post(co.http.URL+"/c2cluster.v1.ProofService/"+method, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if res.StatusCode == http.StatusOK {
		return "", string(b)
	}
	var e struct{ Code, Message string }
	require.NoError(t, json.Unmarshal(b, &e), "%s", b)
	return e.Code, e.Message
}

// TestJSONRequestChecks: over HTTP/JSON a member given twice and an enum
// name the enum lacks are invalid_argument naming them (protojson alone
// would take "BOGUS" as the default priority); unknown fields are still
// ignored; a non-canonical comm_r is refused at submit.
func TestJSONRequestChecks(t *testing.T) {
	c := newCluster(t, queue.Config{})
	co := c.startCoordinator(server.Config{})
	doc := sealedC1(t, 12)
	b64 := base64.StdEncoding.EncodeToString(doc)

	for _, tc := range []struct{ method, body, want string }{
		{"Submit", `{"c1Json":"` + b64 + `","priority":"BOGUS"}`, `priority: unknown value "BOGUS" of enum c2cluster.v1.Priority (known: PRIORITY_UNSPECIFIED, PRIORITY_HIGH, PRIORITY_NORMAL, PRIORITY_LOW)`},
		{"Submit", `{"c1Json":"` + b64 + `","priority":"PRIORITY_HIGH","priority":"PRIORITY_LOW"}`, `priority: duplicate member name "priority"`},
		{"Submit", `{"c1Json":"` + b64 + `","future":1,"future":2}`, `future: duplicate member name "future"`},
		{"Submit", `{"c1Json":"` + b64 + `","sector":{"minerId":"1000","minerId":"1001"}}`, `sector.minerId: duplicate member name "minerId"`},
		{"Prove", `{"submit":{"c1Json":"` + b64 + `","priority":"URGENT"}}`, `submit.priority: unknown value "URGENT"`},
		{"ListJobs", `{"state":"JOB_STATE_LOST"}`, `state: unknown value "JOB_STATE_LOST" of enum c2cluster.v1.JobState`},
	} {
		code, msg := postJSON(t, co, tc.method, tc.body)
		require.Equal(t, "invalid_argument", code, "%s %.80s: %s", tc.method, tc.body, msg)
		require.Contains(t, msg, tc.want)
	}
	jobs, err := c.store.List(c.ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, jobs, "nothing recorded")

	// A known enum name, and a field this server does not know, pass.
	code, msg := postJSON(t, co, "Submit", `{"c1Json":"`+b64+`","priority":"PRIORITY_LOW","fieldOfANewerClient":{"x":[1]}}`)
	require.Empty(t, code, msg)
	require.Contains(t, msg, `"shape":"test-mini"`)

	// comm_r at the field modulus.
	out, err := c1.ParseBytes(doc)
	require.NoError(t, err)
	out.CommR = porep.Domain{1, 0, 0, 0, 255, 255, 255, 255, 254, 91, 254, 255, 2, 164, 189, 83, 5, 216, 161, 9, 8, 216, 57, 51, 72, 125, 157, 41, 83, 167, 237, 115}
	var bad bytes.Buffer
	_, err = out.WriteTo(&bad)
	require.NoError(t, err)
	_, err = co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: bad.Bytes()})
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "comm_r: "+out.CommR.String()+" is not a canonical BLS12-381 scalar")
}

// TestSlowBodyIsCut: a request whose body stops arriving is failed and its
// connection closed once BodyTimeout passes; long-polls and streams that
// outlast BodyTimeout after their body was read go on.
func TestSlowBodyIsCut(t *testing.T) {
	c := newCluster(t, queue.Config{})
	const timeout = 500 * time.Millisecond
	co := c.startCoordinator(server.Config{BodyTimeout: timeout})

	conn, err := net.Dial("tcp", co.http.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	_, err = fmt.Fprintf(conn, "POST /c2cluster.v1.ProofService/Submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"c1Json\":\"AAAA")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	rest, err := io.ReadAll(bufio.NewReader(conn)) // until the server closes the connection
	elapsed := time.Since(start)
	require.NoError(t, err, "the server closed the connection (EOF), not our 30 s deadline")
	t.Logf("connection closed after %v; the server said: %.120q", elapsed, rest)
	require.GreaterOrEqual(t, elapsed, timeout)
	require.Less(t, elapsed, 10*time.Second)

	// A Watch and an Await that outlast BodyTimeout still get their result.
	sub, err := co.client.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: sealedC1(t, 13)})
	require.NoError(t, err)
	raw := c2clusterv1connect.NewProofServiceClient(http.DefaultClient, co.http.URL)
	t0 := time.Now()
	aw, err := raw.Await(c.ctx, connect.NewRequest(&c2clusterv1.AwaitRequest{JobId: sub.JobId, TimeoutMs: uint32(3 * timeout / time.Millisecond)}))
	require.NoError(t, err) // nothing proves the job: the long-poll times out, no error
	require.True(t, aw.Msg.TimedOut)
	require.GreaterOrEqual(t, time.Since(t0), 3*timeout)
	watched, started := make(chan *c2clusterv1.JobStatus, 1), make(chan struct{})
	go func() {
		first := true
		st, _ := co.client.Watch(c.ctx, sub.JobId, func(*c2clusterv1.JobStatus) {
			if first {
				first = false
				close(started)
			}
		})
		watched <- st
	}()
	<-started // the stream is open and has sent the queued state
	// What is tested is that the open stream outlives the body deadline:
	// let three deadlines pass.
	time.Sleep(3 * timeout)
	_, err = co.client.Cancel(c.ctx, sub.JobId, "test")
	require.NoError(t, err)
	select {
	case st := <-watched:
		require.NotNil(t, st, "the watch failed")
		require.Equal(t, c2clusterv1.JobState_JOB_STATE_CANCELLED, st.State)
	case <-time.After(30 * time.Second):
		t.Fatal("the watch never saw the cancel")
	}
}
