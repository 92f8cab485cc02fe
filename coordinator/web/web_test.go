package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/coordinator/web"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/jobstore/jobstoretest"
	"github.com/c2cluster/c2cluster/pkg/porep/poreptest"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/queue/queuetest"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/proto/c2cluster/v1/c2clusterv1connect"
	"github.com/c2cluster/c2cluster/worker/node"
	"github.com/c2cluster/c2cluster/worker/node/nodetest"
)

// testShape is the smallest registered shape with several partitions.
const testShape = "test-micro"

var (
	redisSrv  *jobstoretest.Redis
	paramsDir string
)

func TestMain(m *testing.M) {
	jobstoretest.Main(m, func(r *jobstoretest.Redis) (func(), error) {
		redisSrv = r
		var err error
		paramsDir, err = os.MkdirTemp("", "c2-web-params-")
		return func() { os.RemoveAll(paramsDir) }, err
	}, queuetest.LeakOptions()...)
}

// coordinator is a real coordinator (embedded NATS JetStream, a private key
// space on a real Redis) serving its API and the page on one HTTP server,
// as coordinator serve does.
type coordinator struct {
	t     *testing.T
	ctx   context.Context
	q     *queue.Queue
	store *jobstore.Store
	srv   *server.Server
	base  string // http://host:port
	api   *client.Client
}

func startCoordinator(t *testing.T, cfg web.Config) *coordinator {
	t.Helper()
	// Spans are made (and trace ids recorded) but not exported, as by
	// coordinator serve without -otlp.
	tr, err := telemetry.Setup(context.Background(), telemetry.TracingConfig{ServiceName: "c2-coordinator"})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = tr.Shutdown(context.Background())
		otel.SetTracerProvider(noop.NewTracerProvider())
	})
	ns := queuetest.Server(t)
	nc := queuetest.Conn(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	q, err := queue.Open(ctx, nc, queue.Config{NakDelay: 100 * time.Millisecond, AckWait: 10 * time.Second})
	require.NoError(t, err)
	store, err := jobstore.New(redisSrv.Client(t), jobstore.Config{Prefix: jobstoretest.Prefix(), WatchPoll: 200 * time.Millisecond})
	require.NoError(t, err)
	srv, err := server.New(server.Config{Logger: nodetest.Logger(t), DepthInterval: 200 * time.Millisecond,
		Loop: queue.LoopConfig{FetchWait: 100 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
		q, store, &server.PoRep{ParamsDir: paramsDir})
	require.NoError(t, err)
	require.NoError(t, srv.Start(ctx))
	page, err := web.New(srv, cfg)
	require.NoError(t, err)
	mux := srv.Mux()
	page.Register(mux)
	hs := httptest.NewUnstartedServer(mux)
	hs.Config.Protocols = server.Protocols()
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Stop()
	})
	return &coordinator{t: t, ctx: ctx, q: q, store: store, srv: srv, base: hs.URL, api: client.New(hs.URL)}
}

// get fetches path and returns the status, the Content-Type and the body.
func (c *coordinator) get(path string) (int, string, []byte) {
	c.t.Helper()
	res, err := http.Get(c.base + path)
	require.NoError(c.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	return res.StatusCode, res.Header.Get("Content-Type"), b
}

// getJSON fetches path, requires status and decodes the body into v.
func (c *coordinator) getJSON(path string, status int, v any) {
	c.t.Helper()
	code, ctype, b := c.get(path)
	require.Equal(c.t, status, code, "GET %s: %s", path, b)
	require.Equal(c.t, "application/json", ctype, "GET %s", path)
	require.NoError(c.t, json.Unmarshal(b, v), "GET %s: %s", path, b)
}

// apiError requires an error answer of the JSON endpoints and returns its
// message.
func (c *coordinator) apiError(path string, status int) string {
	c.t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	c.getJSON(path, status, &e)
	require.NotEmpty(c.t, e.Error, "GET %s: an error message", path)
	return e.Error
}

// poll calls cond every 50 ms until it holds, failing the test after within.
func poll(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond) // poll interval of an eventual condition
	}
}

// The JSON shapes the page reads (the tests decode them as the page does).
type jobJSON struct {
	ID             string `json:"id"`
	State          string `json:"state"`
	Terminal       bool   `json:"terminal"`
	Shape          string `json:"shape"`
	Priority       string `json:"priority"`
	Partitions     uint32 `json:"partitions"`
	PartitionsDone uint32 `json:"partitions_done"`
	TraceID        string `json:"trace_id"`
	JaegerURL      string `json:"jaeger_url"`
	ProofBytes     int    `json:"proof_bytes"`
	CreatedUnixMS  int64  `json:"created_unix_ms"`
	Timings        *struct {
		Synthesis float64 `json:"synthesis_ms"`
		Prove     float64 `json:"prove_ms"`
		Total     float64 `json:"total_ms"`
	} `json:"timings"`
}

type inFlightJSON struct {
	Job       string `json:"job"`
	Partition uint32 `json:"partition"`
	Worker    string `json:"worker"`
}

type jobDetail struct {
	Job      jobJSON        `json:"job"`
	InFlight []inFlightJSON `json:"in_flight"`
	Traces   bool           `json:"traces"`
}

type clusterJSON struct {
	Workers []struct {
		ID       string         `json:"id"`
		Host     string         `json:"host"`
		Devices  []string       `json:"devices"`
		Slots    uint32         `json:"slots"`
		InFlight []inFlightJSON `json:"in_flight"`
		Resident []struct {
			Shape     string `json:"shape"`
			Residency string `json:"residency"`
		} `json:"resident"`
		HeartbeatUnixMS int64 `json:"heartbeat_unix_ms"`
	} `json:"workers"`
	Queue []struct {
		Shape    string `json:"shape"`
		Lane     string `json:"lane"`
		Pending  uint64 `json:"pending"`
		InFlight uint64 `json:"in_flight"`
	} `json:"queue"`
	Traces   bool   `json:"traces"`
	JaegerUI string `json:"jaeger_ui"`
}

type jobsJSON struct {
	Jobs []jobJSON `json:"jobs"`
}

func (l jobsJSON) find(id string) *jobJSON {
	for i := range l.Jobs {
		if l.Jobs[i].ID == id {
			return &l.Jobs[i]
		}
	}
	return nil
}

// A job followed through the page's endpoints while a real CPU worker
// proves it: held before its first partition's input, the job is proving
// with that partition in flight on the worker, the cluster view shows the
// worker's device and the queue one task pending and one in flight; let
// go, the job is done with every partition, nothing in flight, the queue
// empty.
func TestEndpointsFollowAJob(t *testing.T) {
	poreptest.Params(t, paramsDir, testShape, "web tests")
	c := startCoordinator(t, web.Config{JaegerUI: "http://jaeger.example:16686/"})
	release := make(chan struct{})
	cfg := nodetest.CPUConfig("web-w1", testShape, paramsDir)
	cfg.Hooks.BeforeStage = func(ctx context.Context, stage string, d *queue.Delivery) error {
		if stage != node.StageInput {
			return nil
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	nodetest.Start(t, c.ctx, cfg, c.q, c.store, nodetest.Logger(t))
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()

	sub, err := c.api.Submit(c.ctx, &c2clusterv1.SubmitRequest{C1Json: poreptest.SealedC1(t, testShape, 7)})
	require.NoError(t, err)
	id := sub.JobId
	require.EqualValues(t, 2, sub.Partitions)

	var d jobDetail
	// The worker registers the delivery as soon as it takes it, and
	// starts the partition (the job proving) just after.
	poll(t, time.Minute, "a partition of the job in flight on the worker, the job proving", func() bool {
		c.getJSON("/ui/api/jobs/"+id, http.StatusOK, &d)
		return len(d.InFlight) == 1 && d.Job.State == "proving"
	})
	require.Equal(t, id, d.Job.ID)
	require.Equal(t, "proving", d.Job.State)
	require.False(t, d.Job.Terminal)
	require.Equal(t, testShape, d.Job.Shape)
	require.Equal(t, "normal", d.Job.Priority)
	require.EqualValues(t, 2, d.Job.Partitions)
	require.EqualValues(t, 0, d.Job.PartitionsDone)
	require.Len(t, d.Job.TraceID, 32)
	require.Equal(t, "http://jaeger.example:16686/trace/"+d.Job.TraceID, d.Job.JaegerURL, "the Jaeger UI link, without the configured trailing slash")
	require.False(t, d.Traces, "no Jaeger query API configured")
	require.Equal(t, id, d.InFlight[0].Job)
	require.Equal(t, "web-w1", d.InFlight[0].Worker)
	require.Less(t, d.InFlight[0].Partition, uint32(2))
	held := d.InFlight[0].Partition

	var cl clusterJSON
	poll(t, time.Minute, "the queue depth: one task pending, one in flight", func() bool {
		c.getJSON("/ui/api/cluster", http.StatusOK, &cl)
		return len(cl.Queue) == 1 && cl.Queue[0].Pending == 1 && cl.Queue[0].InFlight == 1
	})
	require.Equal(t, testShape, cl.Queue[0].Shape)
	require.Equal(t, "normal", cl.Queue[0].Lane)
	require.Len(t, cl.Workers, 1)
	w := cl.Workers[0]
	require.Equal(t, "web-w1", w.ID)
	require.NotEmpty(t, w.Host)
	require.NotEmpty(t, w.Devices, "the CPU backend's device")
	require.EqualValues(t, 1, w.Slots)
	require.Equal(t, []inFlightJSON{{Job: id, Partition: held}}, w.InFlight)
	require.InDelta(t, time.Now().UnixMilli(), w.HeartbeatUnixMS, float64(time.Minute.Milliseconds()))
	require.False(t, cl.Traces)
	require.Equal(t, "http://jaeger.example:16686", cl.JaegerUI)

	var list jobsJSON
	c.getJSON("/ui/api/jobs", http.StatusOK, &list)
	require.NotNil(t, list.find(id))
	require.Equal(t, "proving", list.find(id).State)
	c.getJSON("/ui/api/jobs?state=proving&limit=5", http.StatusOK, &list)
	require.NotNil(t, list.find(id))
	c.getJSON("/ui/api/jobs?state=done", http.StatusOK, &list)
	require.Nil(t, list.find(id), "a proving job is not listed as done")

	close(release)
	released = true
	poll(t, 3*time.Minute, "the job to end", func() bool {
		c.getJSON("/ui/api/jobs/"+id, http.StatusOK, &d)
		return d.Job.Terminal
	})
	require.Equal(t, "done", d.Job.State)
	require.EqualValues(t, 2, d.Job.PartitionsDone)
	require.Equal(t, 2*192, d.Job.ProofBytes)
	// in flight is what the workers' registrations say, refreshed at each
	// heartbeat
	poll(t, time.Minute, "no partition of the job in flight", func() bool {
		c.getJSON("/ui/api/jobs/"+id, http.StatusOK, &d)
		return len(d.InFlight) == 0
	})
	require.NotNil(t, d.Job.Timings)
	require.Positive(t, d.Job.Timings.Synthesis)
	require.Positive(t, d.Job.Timings.Prove)
	require.Positive(t, d.Job.Timings.Total)

	c.getJSON("/ui/api/jobs?state=done", http.StatusOK, &list)
	require.NotNil(t, list.find(id))
	require.EqualValues(t, 2, list.find(id).PartitionsDone)
	require.Zero(t, list.find(id).ProofBytes, "the list leaves proofs out")
	poll(t, time.Minute, "the worker idle and the queue empty", func() bool {
		c.getJSON("/ui/api/cluster", http.StatusOK, &cl)
		return len(cl.Workers) == 1 && len(cl.Workers[0].InFlight) == 0 && len(cl.Queue) == 0
	})

	// The job's page: the HTML shell names the job for the script.
	code, ctype, b := c.get("/ui/job/" + id)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "text/html; charset=utf-8", ctype)
	require.Contains(t, string(b), `data-job="`+id+`"`)
	require.Contains(t, string(b), `data-traces="false"`)
	require.Contains(t, string(b), `href="http://jaeger.example:16686"`, "the Jaeger UI link in the header")
}

// The page's files and headers, and every kind of bad input: an unknown
// job is a 404, a malformed job or trace id, state or limit a 400, all with
// a message; nothing a request carries comes back as markup.
func TestPageAndBadInput(t *testing.T) {
	// A Jaeger address nothing listens on: the trace endpoint reports it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	c := startCoordinator(t, web.Config{JaegerQuery: dead})

	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(c.base + "/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "/ui/", res.Header.Get("Location"))

	res, err = http.Get(c.base + "/ui/")
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "script-src 'self'")
	require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	require.Contains(t, string(b), `data-page="jobs"`)
	require.Contains(t, string(b), `data-traces="true"`)
	require.Contains(t, string(b), `<script src="/ui/static/app.js" defer></script>`)
	for path, ctype := range map[string]string{"/ui/static/app.js": "javascript", "/ui/static/style.css": "text/css"} {
		code, got, body := c.get(path)
		require.Equal(t, http.StatusOK, code, path)
		require.Contains(t, got, ctype, path)
		require.Greater(t, len(body), 1000, path)
	}

	var list jobsJSON
	c.getJSON("/ui/api/jobs", http.StatusOK, &list)
	require.Empty(t, list.Jobs)
	require.NotNil(t, list.Jobs, "an empty list is [], not null")
	var cl clusterJSON
	c.getJSON("/ui/api/cluster", http.StatusOK, &cl)
	require.NotNil(t, cl.Workers)
	require.NotNil(t, cl.Queue)
	require.True(t, cl.Traces)

	unknown := "0123456789abcdef0123456789abcdef"
	require.Contains(t, c.apiError("/ui/api/jobs/"+unknown, http.StatusNotFound), unknown)
	require.Contains(t, c.apiError("/ui/api/jobs/bad.id", http.StatusBadRequest), "outside [A-Za-z0-9_-]")
	require.Contains(t, c.apiError("/ui/api/jobs/"+strings.Repeat("a", 65), http.StatusBadRequest), "1..64 characters")
	require.Contains(t, c.apiError("/ui/api/jobs?state=bogus", http.StatusBadRequest), `state "bogus"`)
	for _, limit := range []string{"0", "1001", "abc", "-1"} {
		require.Contains(t, c.apiError("/ui/api/jobs?limit="+limit, http.StatusBadRequest), "limit", limit)
	}
	require.Contains(t, c.apiError("/ui/api/nothing", http.StatusNotFound), "/ui/api/nothing")
	req, err := http.NewRequest(http.MethodPost, c.base+"/ui/api/jobs", strings.NewReader("{}"))
	require.NoError(t, err)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)

	for _, bad := range []string{"xyz", strings.Repeat("0", 32), strings.Repeat("g", 32), unknown + "00"} {
		require.Contains(t, c.apiError("/ui/api/traces/"+bad, http.StatusBadRequest), "trace id", bad)
	}
	msg := c.apiError("/ui/api/traces/"+unknown, http.StatusBadGateway)
	require.Contains(t, msg, "jaeger query API at "+dead, "names the Jaeger it could not reach")

	// Pages: unknown job 404, malformed id 400, unknown path 404, each with
	// the request's text escaped.
	code, ctype, body := c.get("/ui/job/" + unknown)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "text/html; charset=utf-8", ctype)
	require.Contains(t, string(body), "not found")
	script := "<script>alert(1)</script>"
	code, _, body = c.get("/ui/job/" + url.PathEscape(script))
	require.Equal(t, http.StatusBadRequest, code)
	require.NotContains(t, string(body), script)
	require.Contains(t, string(body), "&lt;script&gt;alert(1)&lt;/script&gt;")
	code, _, body = c.get("/ui/" + url.PathEscape(script))
	require.Equal(t, http.StatusNotFound, code)
	require.NotContains(t, string(body), script)

	// Without a Jaeger query API the trace endpoint says traces are
	// unavailable (and still refuses a malformed id first).
	c2 := startCoordinator(t, web.Config{})
	require.Contains(t, c2.apiError("/ui/api/traces/"+unknown, http.StatusServiceUnavailable), "-jaeger-query")
	require.Contains(t, c2.apiError("/ui/api/traces/nothex", http.StatusBadRequest), "trace id")
}

// New refuses what is not an http(s) base URL. Any ProofService client is
// an API the page can read (here one for a coordinator elsewhere).
func TestNewChecksURLs(t *testing.T) {
	api := c2clusterv1connect.NewProofServiceClient(http.DefaultClient, "http://127.0.0.1:8080")
	for _, bad := range []string{"127.0.0.1:16686", "ftp://h:1", "javascript:alert(1)", "http://", "http://h:1/?q=1", "http://u:p@h:1"} {
		_, err := web.New(api, web.Config{JaegerUI: bad})
		require.ErrorContains(t, err, "JaegerUI", bad)
		_, err = web.New(api, web.Config{JaegerQuery: bad})
		require.ErrorContains(t, err, "JaegerQuery", bad)
	}
	got, err := web.ParseBaseURL(" https://jaeger.internal:16686/ ")
	require.NoError(t, err)
	require.Equal(t, "https://jaeger.internal:16686", got)
	_, err = web.New(nil, web.Config{})
	require.Error(t, err)
	_, err = web.New(api, web.Config{PollInterval: time.Millisecond})
	require.ErrorContains(t, err, "PollInterval")
	_, err = web.New(api, web.Config{JaegerQuery: "http://127.0.0.1:16686", JaegerUI: "https://jaeger.example/"})
	require.NoError(t, err)
}
