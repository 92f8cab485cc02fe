package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Defaults of Config.
const (
	PollIntervalDefault  = 2 * time.Second
	JaegerTimeoutDefault = 10 * time.Second
	// ListLimitDefault is how many jobs the job list shows unless asked.
	ListLimitDefault = 50
)

// Prefix is the path the page is served under.
const Prefix = "/ui/"

// API is what the page reads: the coordinator's public Status and ListJobs.
// *server.Server implements it, and so does a ProofService client
// (c2clusterv1connect.ProofServiceClient).
type API interface {
	Status(context.Context, *connect.Request[c2clusterv1.StatusRequest]) (*connect.Response[c2clusterv1.StatusResponse], error)
	ListJobs(context.Context, *connect.Request[c2clusterv1.ListJobsRequest]) (*connect.Response[c2clusterv1.ListJobsResponse], error)
}

var _ API = (*server.Server)(nil)

// Config configures a Handler. Zero values mean the defaults.
type Config struct {
	// JaegerQuery is the base URL of Jaeger's HTTP query API
	// (http://host:16686), read for traces. Empty: traces unavailable.
	JaegerQuery string
	// JaegerUI is the base URL of Jaeger's web UI, for links to a trace
	// ({JaegerUI}/trace/{id}). Empty: no links.
	JaegerUI string
	// PollInterval is how often the page refreshes while it shows
	// something that changes. Default 2 s.
	PollInterval time.Duration
	// HTTPClient queries Jaeger. Default a client with a 10 s timeout.
	HTTPClient *http.Client
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Handler serves the page and its JSON endpoints.
type Handler struct {
	api    API
	cfg    Config
	page   *template.Template
	static http.Handler
}

//go:embed assets
var assets embed.FS

// New returns the page's handler over api.
func New(api API, cfg Config) (*Handler, error) {
	if api == nil {
		return nil, errors.New("web: New needs the coordinator API")
	}
	var err error
	if cfg.JaegerQuery, err = ParseBaseURL(cfg.JaegerQuery); err != nil {
		return nil, fmt.Errorf("web: Config.JaegerQuery: %w", err)
	}
	if cfg.JaegerUI, err = ParseBaseURL(cfg.JaegerUI); err != nil {
		return nil, fmt.Errorf("web: Config.JaegerUI: %w", err)
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = PollIntervalDefault
	}
	if cfg.PollInterval < 100*time.Millisecond {
		return nil, fmt.Errorf("web: Config.PollInterval %v is below 100ms", cfg.PollInterval)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: JaegerTimeoutDefault}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	page, err := template.ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, fmt.Errorf("web: page template: %w", err)
	}
	sub, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	return &Handler{api: api, cfg: cfg, page: page,
		static: http.StripPrefix(Prefix+"static/", http.FileServerFS(sub))}, nil
}

// ParseBaseURL checks a base URL of Jaeger (http or https, a host, no query)
// and returns it without a trailing slash; "" stays "".
func ParseBaseURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q is not an http(s) base URL such as http://127.0.0.1:16686", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// Register adds the page to mux: everything under /ui/, and / redirecting
// there.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusFound)
	})
	mux.HandleFunc("GET "+Prefix+"{$}", h.jobsPage)
	mux.HandleFunc("GET "+Prefix+"job/{id}", h.jobPage)
	mux.Handle("GET "+Prefix+"static/", h.secure(h.static))
	mux.HandleFunc("GET "+Prefix+"api/cluster", h.cluster)
	mux.HandleFunc("GET "+Prefix+"api/jobs", h.jobs)
	mux.HandleFunc("GET "+Prefix+"api/jobs/{id}", h.job)
	mux.HandleFunc("GET "+Prefix+"api/traces/{trace}", h.trace)
	mux.HandleFunc(Prefix+"api/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, "the page's API answers GET only")
			return
		}
		writeError(w, http.StatusNotFound, "no endpoint "+r.URL.Path+" (there are "+Prefix+"api/cluster, api/jobs, api/jobs/{id}, api/traces/{traceID})")
	})
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		h.render(w, http.StatusNotFound, pageData{Title: "not found", Error: "There is no page " + r.URL.Path + "."})
	})
}

// Handler returns a mux serving only the page (for tests and for mounting
// beside another API).
func (h *Handler) Handler() http.Handler {
	mux := http.NewServeMux()
	h.Register(mux)
	return mux
}

// secure sets the headers every answer of the page carries: no inline
// script or style, nothing from elsewhere, no sniffing, no framing.
func (h *Handler) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		next.ServeHTTP(w, r)
	})
}

func setSecurityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
}

// pageData fills assets/page.html.
type pageData struct {
	Title    string
	Page     string // "jobs" or "job"
	JobID    string
	PollMS   int64
	Traces   bool
	JaegerUI string
	Error    string // set: the page says only this
}

func (h *Handler) pageData(page, job string) pageData {
	return pageData{Title: "jobs", Page: page, JobID: job, PollMS: h.cfg.PollInterval.Milliseconds(),
		Traces: h.cfg.JaegerQuery != "", JaegerUI: h.cfg.JaegerUI}
}

func (h *Handler) render(w http.ResponseWriter, status int, d pageData) {
	setSecurityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := h.page.Execute(w, d); err != nil {
		h.cfg.Logger.Warn("web: rendering the page", slog.Any("err", err))
	}
}

func (h *Handler) jobsPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, http.StatusOK, h.pageData("jobs", ""))
}

// jobPage serves a job's page once the coordinator knows the job: an
// unknown job is a 404 page, a malformed id a 400 page.
func (h *Handler) jobPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := h.api.Status(r.Context(), connect.NewRequest(&c2clusterv1.StatusRequest{JobId: id})); err != nil {
		status, msg := apiError(err)
		h.render(w, status, pageData{Title: "job " + id, Error: msg})
		return
	}
	d := h.pageData("job", id)
	d.Title = "job " + id
	h.render(w, http.StatusOK, d)
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	setSecurityHeaders(w)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorJSON is every error answer of the JSON endpoints.
type errorJSON struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorJSON{Error: msg})
}

// apiError maps an error of the coordinator API to an HTTP status and a
// message.
func apiError(err error) (int, string) {
	msg := err.Error()
	var ce *connect.Error
	if errors.As(err, &ce) {
		msg = ce.Message()
	}
	switch connect.CodeOf(err) {
	case connect.CodeNotFound:
		return http.StatusNotFound, msg
	case connect.CodeInvalidArgument:
		return http.StatusBadRequest, msg
	case connect.CodeFailedPrecondition:
		return http.StatusConflict, msg
	case connect.CodeDeadlineExceeded, connect.CodeCanceled:
		return http.StatusGatewayTimeout, "coordinator: " + msg
	case connect.CodeUnavailable:
		return http.StatusServiceUnavailable, "coordinator: " + msg
	}
	return http.StatusInternalServerError, "coordinator: " + msg
}

// jobJSON is a job as the page shows it.
type jobJSON struct {
	ID             string       `json:"id"`
	State          string       `json:"state"`
	Terminal       bool         `json:"terminal"`
	Shape          string       `json:"shape"`
	Priority       string       `json:"priority"`
	Partitions     uint32       `json:"partitions"`
	PartitionsDone uint32       `json:"partitions_done"`
	Reason         string       `json:"reason,omitempty"`
	CreatedUnixMS  int64        `json:"created_unix_ms"`
	UpdatedUnixMS  int64        `json:"updated_unix_ms"`
	TraceID        string       `json:"trace_id,omitempty"`
	JaegerURL      string       `json:"jaeger_url,omitempty"`
	ProofBytes     int          `json:"proof_bytes,omitempty"`
	Sector         *sectorJSON  `json:"sector,omitempty"`
	Timings        *timingsJSON `json:"timings,omitempty"`
}

type sectorJSON struct {
	Miner  *uint64 `json:"miner,omitempty"`
	Number *uint64 `json:"number,omitempty"`
}

// timingsJSON are the job's stage timings in milliseconds (partition stages
// summed over its partitions).
type timingsJSON struct {
	QueueWait float64 `json:"queue_wait_ms"`
	Synthesis float64 `json:"synthesis_ms"`
	Prove     float64 `json:"prove_ms"`
	LockWait  float64 `json:"lock_wait_ms"`
	Verify    float64 `json:"verify_ms"`
	Assemble  float64 `json:"assemble_ms"`
	Total     float64 `json:"total_ms"`
}

// State names of the page (and of the CLI's -state).
var stateNames = map[c2clusterv1.JobState]string{
	c2clusterv1.JobState_JOB_STATE_QUEUED:     "queued",
	c2clusterv1.JobState_JOB_STATE_PROVING:    "proving",
	c2clusterv1.JobState_JOB_STATE_ASSEMBLING: "assembling",
	c2clusterv1.JobState_JOB_STATE_DONE:       "done",
	c2clusterv1.JobState_JOB_STATE_FAILED:     "failed",
	c2clusterv1.JobState_JOB_STATE_CANCELLED:  "cancelled",
}

func stateName(s c2clusterv1.JobState) string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return "unknown"
}

func terminal(s c2clusterv1.JobState) bool {
	switch s {
	case c2clusterv1.JobState_JOB_STATE_DONE, c2clusterv1.JobState_JOB_STATE_FAILED, c2clusterv1.JobState_JOB_STATE_CANCELLED:
		return true
	}
	return false
}

func priorityName(p c2clusterv1.Priority) string {
	switch p {
	case c2clusterv1.Priority_PRIORITY_HIGH:
		return "high"
	case c2clusterv1.Priority_PRIORITY_LOW:
		return "low"
	}
	return "normal"
}

func (h *Handler) jobJSON(j *c2clusterv1.JobStatus) jobJSON {
	out := jobJSON{ID: j.JobId, State: stateName(j.State), Terminal: terminal(j.State), Shape: j.Shape,
		Priority: priorityName(j.Priority), Partitions: j.Partitions, PartitionsDone: j.PartitionsDone, Reason: j.Reason,
		CreatedUnixMS: j.CreatedUnixMs, UpdatedUnixMS: j.UpdatedUnixMs, TraceID: j.TraceId, ProofBytes: len(j.Proof)}
	if j.TraceId != "" && h.cfg.JaegerUI != "" {
		out.JaegerURL = h.cfg.JaegerUI + "/trace/" + j.TraceId
	}
	if s := j.Sector; s != nil {
		out.Sector = &sectorJSON{Miner: s.MinerId, Number: s.SectorNumber}
	}
	if t := j.Timings; t != nil {
		out.Timings = &timingsJSON{QueueWait: t.QueueWaitMs, Synthesis: t.SynthesisMs, Prove: t.ProveMs,
			LockWait: t.LockWaitMs, Verify: t.VerifyMs, Assemble: t.AssembleMs, Total: t.TotalMs}
	}
	return out
}

// clusterJSON is the answer of /ui/api/cluster.
type clusterJSON struct {
	NowUnixMS int64        `json:"now_unix_ms"`
	Workers   []workerJSON `json:"workers"`
	Queue     []laneJSON   `json:"queue"`
	// Traces: a Jaeger query API is configured.
	Traces   bool   `json:"traces"`
	JaegerUI string `json:"jaeger_ui,omitempty"`
}

type workerJSON struct {
	ID              string         `json:"id"`
	Host            string         `json:"host"`
	Version         string         `json:"version,omitempty"`
	Devices         []string       `json:"devices"`
	Slots           uint32         `json:"slots"`
	InFlight        []inFlightJSON `json:"in_flight"`
	Resident        []residentJSON `json:"resident"`
	HeartbeatUnixMS int64          `json:"heartbeat_unix_ms"`
	// Quarantine is why the worker takes no work ("" when it does).
	Quarantine string `json:"quarantine,omitempty"`
	BadProofs  uint32 `json:"bad_proofs,omitempty"`
}

// inFlightJSON is one partition a worker is proving.
type inFlightJSON struct {
	Job       string `json:"job"`
	Partition uint32 `json:"partition"`
	Worker    string `json:"worker,omitempty"`
}

type residentJSON struct {
	Shape     string `json:"shape"`
	Residency string `json:"residency"`
}

type laneJSON struct {
	Shape    string `json:"shape"`
	Lane     string `json:"lane"`
	Pending  uint64 `json:"pending"`
	InFlight uint64 `json:"in_flight"`
}

// workers converts the API's workers; a "current" entry that is not
// "<job>.<partition>" is left out.
func workers(ws []*c2clusterv1.WorkerInfo) []workerJSON {
	out := make([]workerJSON, 0, len(ws))
	for _, w := range ws {
		wj := workerJSON{ID: w.Id, Host: w.Host, Version: w.Version, Devices: w.Devices, Slots: w.Slots,
			InFlight: []inFlightJSON{}, Resident: []residentJSON{}, HeartbeatUnixMS: w.HeartbeatUnixMs, BadProofs: w.BadProofs}
		if q := w.Quarantine; q != nil {
			wj.Quarantine = q.Reason + " (by " + q.By + ")"
		}
		if wj.Devices == nil {
			wj.Devices = []string{}
		}
		for _, c := range w.Current {
			if job, part, err := queue.ParseMsgID(c); err == nil {
				wj.InFlight = append(wj.InFlight, inFlightJSON{Job: job, Partition: part})
			}
		}
		for _, r := range w.Resident {
			wj.Resident = append(wj.Resident, residentJSON{Shape: r.Shape, Residency: r.Residency})
		}
		out = append(out, wj)
	}
	return out
}

func (h *Handler) cluster(w http.ResponseWriter, r *http.Request) {
	res, err := h.api.Status(r.Context(), connect.NewRequest(&c2clusterv1.StatusRequest{}))
	if err != nil {
		status, msg := apiError(err)
		writeError(w, status, msg)
		return
	}
	out := clusterJSON{NowUnixMS: time.Now().UnixMilli(), Workers: workers(res.Msg.Workers), Queue: []laneJSON{},
		Traces: h.cfg.JaegerQuery != "", JaegerUI: h.cfg.JaegerUI}
	for _, d := range res.Msg.Queue {
		out.Queue = append(out.Queue, laneJSON{Shape: d.Shape, Lane: d.Lane, Pending: d.Pending, InFlight: d.InFlight})
	}
	writeJSON(w, http.StatusOK, out)
}

// jobsJSON is the answer of /ui/api/jobs.
type jobsJSON struct {
	NowUnixMS int64     `json:"now_unix_ms"`
	Jobs      []jobJSON `json:"jobs"`
}

func (h *Handler) jobs(w http.ResponseWriter, r *http.Request) {
	req := &c2clusterv1.ListJobsRequest{Limit: ListLimitDefault}
	q := r.URL.Query()
	if s := q.Get("state"); s != "" && s != "all" {
		found := false
		for k, v := range stateNames {
			if v == s {
				req.State, found = k, true
			}
		}
		if !found {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("state %q is none of queued, proving, assembling, done, failed, cancelled, all", s))
			return
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil || n == 0 || n > 1000 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit %q is not a number from 1 to 1000", s))
			return
		}
		req.Limit = uint32(n)
	}
	res, err := h.api.ListJobs(r.Context(), connect.NewRequest(req))
	if err != nil {
		status, msg := apiError(err)
		writeError(w, status, msg)
		return
	}
	out := jobsJSON{NowUnixMS: time.Now().UnixMilli(), Jobs: []jobJSON{}}
	for _, j := range res.Msg.Jobs {
		out.Jobs = append(out.Jobs, h.jobJSON(j))
	}
	writeJSON(w, http.StatusOK, out)
}

// jobDetailJSON is the answer of /ui/api/jobs/{id}: the job and, from the
// workers' registrations, which of its partitions are being proved where.
type jobDetailJSON struct {
	NowUnixMS int64          `json:"now_unix_ms"`
	Job       jobJSON        `json:"job"`
	InFlight  []inFlightJSON `json:"in_flight"`
	Traces    bool           `json:"traces"`
}

func (h *Handler) job(w http.ResponseWriter, r *http.Request) {
	res, err := h.api.Status(r.Context(), connect.NewRequest(&c2clusterv1.StatusRequest{JobId: r.PathValue("id")}))
	if err != nil {
		status, msg := apiError(err)
		writeError(w, status, msg)
		return
	}
	j := res.Msg.Job
	if j == nil {
		writeError(w, http.StatusBadGateway, "coordinator: Status answered without the job")
		return
	}
	out := jobDetailJSON{NowUnixMS: time.Now().UnixMilli(), Job: h.jobJSON(j), InFlight: []inFlightJSON{}, Traces: h.cfg.JaegerQuery != ""}
	for _, wk := range workers(res.Msg.Workers) {
		for _, f := range wk.InFlight {
			if f.Job == j.JobId {
				f.Worker = wk.ID
				out.InFlight = append(out.InFlight, f)
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) trace(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("trace")
	if err := checkTraceID(id); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if h.cfg.JaegerQuery == "" {
		writeError(w, http.StatusServiceUnavailable, "traces are unavailable: the coordinator has no Jaeger query API configured (-jaeger-query, $C2_JAEGER_QUERY)")
		return
	}
	t, err := FetchTrace(r.Context(), h.cfg.HTTPClient, h.cfg.JaegerQuery, id)
	switch {
	case errors.Is(err, ErrTraceNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("trace %s is not in Jaeger (yet: spans arrive a few seconds after they end)", id))
		return
	case err != nil:
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	if h.cfg.JaegerUI != "" {
		t.JaegerURL = h.cfg.JaegerUI + "/trace/" + id
	}
	writeJSON(w, http.StatusOK, t)
}

// checkTraceID accepts an OpenTelemetry trace id: 32 hex digits, not all
// zero.
func checkTraceID(id string) error {
	if len(id) != 32 {
		return fmt.Errorf("trace id %q is not 32 hex digits", id)
	}
	zero := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return fmt.Errorf("trace id %q has %q, not a hex digit", id, c)
		}
		zero = zero && c == '0'
	}
	if zero {
		return errors.New("trace id 00000000000000000000000000000000 is the invalid (all-zero) id")
	}
	return nil
}
