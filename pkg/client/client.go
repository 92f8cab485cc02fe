package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/proto/c2cluster/v1/c2clusterv1connect"
)

// ErrJobFailed is matched (errors.Is) by the *JobError of a job that ended
// failed or cancelled.
var ErrJobFailed = errors.New("job did not complete")

// JobError reports a job that ended without a proof.
type JobError struct {
	JobID  string
	State  c2clusterv1.JobState
	Reason string
}

func (e *JobError) Error() string {
	return fmt.Sprintf("job %s %s: %s", e.JobID, StateName(e.State), e.Reason)
}

// Is matches ErrJobFailed.
func (e *JobError) Is(target error) bool { return target == ErrJobFailed }

// Client talks to one coordinator. It is safe for concurrent use.
type Client struct {
	rpc c2clusterv1connect.ProofServiceClient
}

type options struct {
	grpc  bool
	hc    connect.HTTPClient
	token string
	tls   *tls.Config
}

// Option configures New.
type Option func(*options)

// WithGRPC uses the gRPC protocol (HTTP/2; cleartext for http:// URLs).
func WithGRPC() Option { return func(o *options) { o.grpc = true } }

// WithHTTPClient sets the HTTP client (TLS settings, timeouts).
func WithHTTPClient(c connect.HTTPClient) Option { return func(o *options) { o.hc = c } }

// New returns a client of the coordinator at baseURL
// ("http://127.0.0.1:8080").
func New(baseURL string, opts ...Option) *Client {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	var copts []connect.ClientOption
	if o.grpc {
		copts = append(copts, connect.WithGRPC())
		if o.hc == nil && strings.HasPrefix(baseURL, "http://") {
			o.hc = h2cClient()
		}
	}
	if o.hc == nil && o.tls != nil {
		o.hc = tlsClient(o.tls)
	}
	if o.hc == nil {
		o.hc = http.DefaultClient
	}
	if o.token != "" {
		copts = append(copts, connect.WithInterceptors(bearer(o.token)))
	}
	// C1 outputs are large: allow big messages both ways.
	copts = append(copts, connect.WithReadMaxBytes(512<<20), connect.WithSendMaxBytes(512<<20))
	return &Client{rpc: c2clusterv1connect.NewProofServiceClient(o.hc, strings.TrimRight(baseURL, "/"), copts...)}
}

// h2cClient speaks HTTP/2 without TLS (gRPC to a plain-text coordinator).
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{
		Protocols:         p,
		DialContext:       (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSClientConfig:   &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}}
}

// Submit sends a job.
func (c *Client) Submit(ctx context.Context, req *c2clusterv1.SubmitRequest) (*c2clusterv1.SubmitResponse, error) {
	res, err := c.rpc.Submit(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

// Status returns a job's status and the cluster's (jobID "" for the
// cluster only).
func (c *Client) Status(ctx context.Context, jobID string) (*c2clusterv1.StatusResponse, error) {
	res, err := c.rpc.Status(ctx, connect.NewRequest(&c2clusterv1.StatusRequest{JobId: jobID}))
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

// Cancel cancels a job.
func (c *Client) Cancel(ctx context.Context, jobID, reason string) (*c2clusterv1.JobStatus, error) {
	res, err := c.rpc.Cancel(ctx, connect.NewRequest(&c2clusterv1.CancelRequest{JobId: jobID, Reason: reason}))
	if err != nil {
		return nil, err
	}
	return res.Msg.Job, nil
}

// List lists recent jobs (state unspecified: all).
func (c *Client) List(ctx context.Context, state c2clusterv1.JobState, limit int) ([]*c2clusterv1.JobStatus, error) {
	res, err := c.rpc.ListJobs(ctx, connect.NewRequest(&c2clusterv1.ListJobsRequest{State: state, Limit: uint32(limit)}))
	if err != nil {
		return nil, err
	}
	return res.Msg.Jobs, nil
}

// Await waits until the job is terminal or ctx ends, calling the server's
// Await repeatedly (each call is capped by the server). A job that ended
// failed or cancelled is returned with a *JobError.
func (c *Client) Await(ctx context.Context, jobID string) (*c2clusterv1.JobStatus, error) {
	for {
		res, err := c.rpc.Await(ctx, connect.NewRequest(&c2clusterv1.AwaitRequest{JobId: jobID}))
		if err != nil {
			return nil, err
		}
		if !res.Msg.TimedOut {
			return res.Msg.Job, jobErr(res.Msg.Job)
		}
	}
}

// Watch calls progress with the job's status on every change until the job
// is terminal, and returns the final status (with a *JobError when it did
// not complete). A dropped stream is resumed.
func (c *Client) Watch(ctx context.Context, jobID string, progress func(*c2clusterv1.JobStatus)) (*c2clusterv1.JobStatus, error) {
	var last *c2clusterv1.JobStatus
	wait := watchRetryMin
	for {
		stream, err := c.rpc.Watch(ctx, connect.NewRequest(&c2clusterv1.WatchRequest{JobId: jobID}))
		if err != nil {
			return last, err
		}
		received := false
		for stream.Receive() {
			received = true
			last = stream.Msg().Job
			if progress != nil {
				progress(last)
			}
			if Terminal(last.State) {
				_ = stream.Close()
				return last, jobErr(last)
			}
		}
		err = stream.Err()
		_ = stream.Close()
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
		var cerr *connect.Error
		if errors.As(err, &cerr) && cerr.Code() != connect.CodeUnavailable && cerr.Code() != connect.CodeDeadlineExceeded {
			return last, err
		}
		// The stream ended without a terminal state (server restart,
		// proxy timeout): resume, at once after a stream that delivered
		// something, else after a pause that doubles up to watchRetryMax
		// while the coordinator stays unreachable.
		if received {
			wait = watchRetryMin
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, watchRetryMax)
	}
}

// The pauses of Watch between attempts to reach an unreachable coordinator.
const (
	watchRetryMin = 100 * time.Millisecond
	watchRetryMax = 5 * time.Second
)

// Prove submits a job and watches it to the end, reporting progress.
func (c *Client) Prove(ctx context.Context, req *c2clusterv1.SubmitRequest, progress func(*c2clusterv1.JobStatus)) (*c2clusterv1.JobStatus, error) {
	sub, err := c.Submit(ctx, req)
	if err != nil {
		return nil, err
	}
	return c.Watch(ctx, sub.JobId, progress)
}

func jobErr(j *c2clusterv1.JobStatus) error {
	if j.State == c2clusterv1.JobState_JOB_STATE_FAILED || j.State == c2clusterv1.JobState_JOB_STATE_CANCELLED {
		return &JobError{JobID: j.JobId, State: j.State, Reason: j.Reason}
	}
	return nil
}

// Terminal reports whether a state is final.
func Terminal(s c2clusterv1.JobState) bool {
	return s == c2clusterv1.JobState_JOB_STATE_DONE || s == c2clusterv1.JobState_JOB_STATE_FAILED || s == c2clusterv1.JobState_JOB_STATE_CANCELLED
}

// StateName is the short name of a state ("proving").
func StateName(s c2clusterv1.JobState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATE_"))
}

// ProgressLine renders a status as one line for terminals and logs:
// "job 3f2a… proving 2/3 partitions 4.2s".
func ProgressLine(j *c2clusterv1.JobStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %-10s %d/%d partitions %6.1fs", j.JobId, StateName(j.State), j.PartitionsDone, j.Partitions,
		j.GetTimings().GetTotalMs()/1000)
	if j.Reason != "" {
		fmt.Fprintf(&b, " (%s)", j.Reason)
	}
	return b.String()
}
