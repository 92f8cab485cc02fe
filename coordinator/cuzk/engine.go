package cuzk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	cuzkv1 "github.com/c2cluster/c2cluster/proto/cuzk/v1"
	"github.com/c2cluster/c2cluster/proto/cuzk/v1/cuzkv1connect"
)

// Coordinator is what the Engine needs of the coordinator: the methods of
// its public API that *server.Server implements.
type Coordinator interface {
	Submit(context.Context, *connect.Request[c2clusterv1.SubmitRequest]) (*connect.Response[c2clusterv1.SubmitResponse], error)
	Await(context.Context, *connect.Request[c2clusterv1.AwaitRequest]) (*connect.Response[c2clusterv1.AwaitResponse], error)
	Cancel(context.Context, *connect.Request[c2clusterv1.CancelRequest]) (*connect.Response[c2clusterv1.CancelResponse], error)
	Status(context.Context, *connect.Request[c2clusterv1.StatusRequest]) (*connect.Response[c2clusterv1.StatusResponse], error)
}

var _ Coordinator = (*server.Server)(nil)

// MaxRetriesDefault is Config.MaxRetries' default.
const MaxRetriesDefault = 100

// Config configures an Engine. Zero values mean the defaults.
type Config struct {
	// Metrics are the coordinator's (server.Server.Metrics()): GetMetrics
	// serves their registry and GetStatus reads its totals from them.
	// Default: a fresh telemetry.NewMetrics() (empty totals).
	Metrics *telemetry.Metrics
	// MaxMessageBytes refuses larger requests before reading them. Default
	// server.MaxC1BytesDefault plus 1 MiB (the coordinator's own limit of a
	// submission); set it from the coordinator's MaxC1Bytes.
	MaxMessageBytes int
	// MaxRetries bounds the new jobs one request_id may start after its
	// earlier ones failed or were cancelled. Default MaxRetriesDefault.
	MaxRetries int
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Engine implements cuzk.v1.ProvingEngine on top of a Coordinator.
type Engine struct {
	co    Coordinator
	cfg   Config
	log   *slog.Logger
	start time.Time
}

var _ cuzkv1connect.ProvingEngineHandler = (*Engine)(nil)

// New returns an Engine over the coordinator co.
func New(co Coordinator, cfg Config) (*Engine, error) {
	if co == nil {
		return nil, errors.New("cuzk: New needs a coordinator")
	}
	if cfg.Metrics == nil {
		cfg.Metrics = telemetry.NewMetrics()
	}
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = server.MaxC1BytesDefault + 1<<20
	}
	if cfg.MaxMessageBytes < 0 {
		return nil, fmt.Errorf("cuzk: Config.MaxMessageBytes %d is negative", cfg.MaxMessageBytes)
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = MaxRetriesDefault
	}
	if cfg.MaxRetries < 0 || cfg.MaxRetries > maxRetriesLimit {
		return nil, fmt.Errorf("cuzk: Config.MaxRetries %d outside 1..%d", cfg.MaxRetries, maxRetriesLimit)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Engine{co: co, cfg: cfg, log: cfg.Logger, start: time.Now()}, nil
}

// Handler returns the path prefix and the connect handler of
// cuzk.v1.ProvingEngine: gRPC (what Curio's client speaks), gRPC-Web and
// Connect. Serve it over HTTP/2 without TLS (NewHTTPServer).
func (e *Engine) Handler() (string, http.Handler) {
	return cuzkv1connect.NewProvingEngineHandler(e, connect.WithReadMaxBytes(e.cfg.MaxMessageBytes))
}

// Mux returns a mux serving the ProvingEngine and gRPC server reflection
// (v1 and v1alpha, naming only cuzk.v1.ProvingEngine), so that grpcurl
// calls it without the .proto file.
func (e *Engine) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	path, h := e.Handler()
	mux.Handle(path, h)
	reflector := grpcreflect.NewStaticReflector(cuzkv1connect.ProvingEngineName)
	mux.Handle(grpcreflect.NewHandlerV1(reflector))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	return mux
}

// SubmitProof implements cuzk.v1.ProvingEngine.
func (e *Engine) SubmitProof(ctx context.Context, req *connect.Request[cuzkv1.SubmitProofRequest]) (*connect.Response[cuzkv1.SubmitProofResponse], error) {
	sub, err := e.submit(ctx, req.Msg)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&cuzkv1.SubmitProofResponse{JobId: sub.JobId}), nil
}

// AwaitProof implements cuzk.v1.ProvingEngine: one wait of at most
// timeout_ms (0: the coordinator's maximum).
func (e *Engine) AwaitProof(ctx context.Context, req *connect.Request[cuzkv1.AwaitProofRequest]) (*connect.Response[cuzkv1.AwaitProofResponse], error) {
	if req.Msg.JobId == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("AwaitProof: job_id is empty"))
	}
	res, err := e.await(ctx, req.Msg.JobId, req.Msg.TimeoutMs, false)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(res), nil
}

// Prove implements cuzk.v1.ProvingEngine: SubmitProof, then wait until the
// job ends or the caller's deadline passes.
func (e *Engine) Prove(ctx context.Context, req *connect.Request[cuzkv1.ProveRequest]) (*connect.Response[cuzkv1.ProveResponse], error) {
	if req.Msg.Submit == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("Prove: submit is missing"))
	}
	sub, err := e.submit(ctx, req.Msg.Submit)
	if err != nil {
		return nil, err
	}
	res, err := e.await(ctx, sub.JobId, 0, true)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&cuzkv1.ProveResponse{Result: res}), nil
}

// await waits for the job: one Await of timeoutMs (0: the coordinator's
// maximum), or, untilEnd, Await after Await until the job ends or ctx does.
func (e *Engine) await(ctx context.Context, jobID string, timeoutMs uint64, untilEnd bool) (*cuzkv1.AwaitProofResponse, error) {
	ms := uint32(min(timeoutMs, math.MaxUint32))
	for {
		res, err := e.co.Await(ctx, connect.NewRequest(&c2clusterv1.AwaitRequest{JobId: jobID, TimeoutMs: ms}))
		if err != nil {
			return nil, wrap(fmt.Sprintf("job %s", jobID), err)
		}
		if !res.Msg.TimedOut || !untilEnd {
			return awaitResult(res.Msg.Job, res.Msg.TimedOut), nil
		}
		if err := ctx.Err(); err != nil {
			return nil, wrap(fmt.Sprintf("job %s", jobID), err)
		}
	}
}

// awaitResult is a job's status as AwaitProof reports it.
func awaitResult(j *c2clusterv1.JobStatus, timedOut bool) *cuzkv1.AwaitProofResponse {
	res := &cuzkv1.AwaitProofResponse{JobId: j.GetJobId()}
	switch {
	case timedOut:
		res.Status = cuzkv1.AwaitProofResponse_TIMEOUT
		res.ErrorMessage = fmt.Sprintf("job %s is still %s (%d of %d partitions proved) at the await timeout",
			j.GetJobId(), stateName(j.GetState()), j.GetPartitionsDone(), j.GetPartitions())
	case j.GetState() == c2clusterv1.JobState_JOB_STATE_DONE:
		res.Status = cuzkv1.AwaitProofResponse_COMPLETED
		res.Proof = j.GetProof()
	case j.GetState() == c2clusterv1.JobState_JOB_STATE_FAILED:
		res.Status = cuzkv1.AwaitProofResponse_FAILED
		res.ErrorMessage = j.GetReason()
		if res.ErrorMessage == "" {
			res.ErrorMessage = fmt.Sprintf("job %s failed", j.GetJobId())
		}
	case j.GetState() == c2clusterv1.JobState_JOB_STATE_CANCELLED:
		res.Status = cuzkv1.AwaitProofResponse_CANCELLED
		res.ErrorMessage = j.GetReason()
	default:
		res.Status = cuzkv1.AwaitProofResponse_UNKNOWN
		res.ErrorMessage = fmt.Sprintf("job %s is %s", j.GetJobId(), stateName(j.GetState()))
	}
	t := j.GetTimings()
	res.QueueWaitMs = msOf(t.GetQueueWaitMs())
	res.SynthesisMs = msOf(t.GetSynthesisMs())
	res.GpuComputeMs = msOf(t.GetProveMs())
	res.TotalMs = msOf(t.GetTotalMs())
	return res
}

func msOf(ms float64) uint64 {
	if ms <= 0 || math.IsNaN(ms) {
		return 0
	}
	return uint64(math.Round(ms))
}

// stateName is a job state in lower case ("proving").
func stateName(s c2clusterv1.JobState) string {
	switch s {
	case c2clusterv1.JobState_JOB_STATE_QUEUED:
		return "queued"
	case c2clusterv1.JobState_JOB_STATE_PROVING:
		return "proving"
	case c2clusterv1.JobState_JOB_STATE_ASSEMBLING:
		return "assembling"
	case c2clusterv1.JobState_JOB_STATE_DONE:
		return "done"
	case c2clusterv1.JobState_JOB_STATE_FAILED:
		return "failed"
	case c2clusterv1.JobState_JOB_STATE_CANCELLED:
		return "cancelled"
	}
	return s.String()
}

// CancelProof implements cuzk.v1.ProvingEngine.
func (e *Engine) CancelProof(ctx context.Context, req *connect.Request[cuzkv1.CancelProofRequest]) (*connect.Response[cuzkv1.CancelProofResponse], error) {
	id := req.Msg.JobId
	if id == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("CancelProof: job_id is empty"))
	}
	op := fmt.Sprintf("CancelProof: job %s", id)
	st, err := e.co.Status(ctx, connect.NewRequest(&c2clusterv1.StatusRequest{JobId: id}))
	if err != nil {
		return nil, wrap(op, err)
	}
	j := st.Msg.Job
	switch j.GetState() {
	case c2clusterv1.JobState_JOB_STATE_CANCELLED:
		return connect.NewResponse(&cuzkv1.CancelProofResponse{}), nil
	case c2clusterv1.JobState_JOB_STATE_DONE, c2clusterv1.JobState_JOB_STATE_FAILED:
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("%s is already %s: nothing to cancel", op, stateName(j.GetState())))
	}
	// A worker has started on the job once it left the queued state or
	// has a partition proved.
	running := j.GetState() != c2clusterv1.JobState_JOB_STATE_QUEUED || j.GetPartitionsDone() > 0
	if _, err := e.co.Cancel(ctx, connect.NewRequest(&c2clusterv1.CancelRequest{JobId: id, Reason: "cancelled through the cuzk API (CancelProof)"})); err != nil {
		return nil, wrap(op, err)
	}
	e.log.InfoContext(ctx, "cuzk: proof cancelled", telemetry.LogJob(id), slog.Bool("was_running", running))
	return connect.NewResponse(&cuzkv1.CancelProofResponse{WasRunning: running}), nil
}

// wrap gives a coordinator error the operation's context, keeping its code.
func wrap(op string, err error) error {
	var ce *connect.Error
	switch {
	case errors.As(err, &ce):
		return connect.NewError(ce.Code(), fmt.Errorf("%s: %s", op, ce.Message()))
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, fmt.Errorf("%s: %w", op, err))
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, fmt.Errorf("%s: %w", op, err))
	}
	return connect.NewError(connect.CodeInternal, fmt.Errorf("%s: %w", op, err))
}
