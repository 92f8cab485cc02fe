package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/porep"
)

// readyLine is what damocles-worker waits for before it sends requests:
// vc-processors' ready_msg(STAGE) with the C2 stage name "c2", compared
// after trimming.
const readyLine = "c2 processor ready"

// maxLineBytes bounds one request line (a 64 GiB sector's C1 output is
// about 40 MB of JSON; the client sends at most 512 MiB). A longer line is
// answered with an error and skipped.
const maxLineBytes = 512 << 20

// idPrefixBytes is how much of an overlong line is kept to read its id.
const idPrefixBytes = 64

// wireRequest is vc-processors' Request<C2>: {"id": u64, "task": C2}.
type wireRequest struct {
	ID   *uint64   `json:"id"`
	Task *wireTask `json:"task"`
}

// wireTask is vc-processors' builtin C2 task: the C1 output as the
// SealCommitPhase1Output object itself, prover_id as serde's [u8; 32] (an
// array of 32 integers), sector_id (SectorId, a u64 newtype: a number) and
// miner_id (ActorID, a u64).
type wireTask struct {
	C1Out    json.RawMessage `json:"c1out"`
	ProverID *porep.Domain   `json:"prover_id"`
	SectorID *uint64         `json:"sector_id"`
	MinerID  *uint64         `json:"miner_id"`
}

// wireResponse is vc-processors' Response<SealCommitPhase2Output>: exactly
// one of err_msg and output is non-null.
type wireResponse struct {
	ID     uint64    `json:"id"`
	ErrMsg *string   `json:"err_msg"`
	Output *c2Output `json:"output"`
}

// c2Output is filecoin-proofs-api's SealCommitPhase2Output.
type c2Output struct {
	Proof byteArray `json:"proof"`
}

// byteArray is serde_json's form of a Vec<u8>: an array of integers (Go
// would write a []byte as base64).
type byteArray []byte

func (b byteArray) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 2+4*len(b))
	out = append(out, '[')
	for i, v := range b {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendUint(out, uint64(v), 10)
	}
	return append(out, ']'), nil
}

// processor serves the protocol: one goroutine reads requests, one per
// request handles it, responses are written whole, one at a time.
type processor struct {
	cfg *config
	cl  *client.Client
	log *slog.Logger

	outMu sync.Mutex
	out   io.Writer

	mu       sync.Mutex
	closed   bool // no more handlers start
	inFlight int
	wg       sync.WaitGroup
}

func newProcessor(cfg *config, stderr io.Writer) *processor {
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("processor", "c2-damocles", "pid", os.Getpid())
	return &processor{cfg: cfg, cl: cfg.client(), log: log}
}

// serve writes the ready line and handles requests until end of input
// (requests in flight are finished and answered: nil) or ctx ends
// (requests in flight are answered with an error: an error).
func (p *processor) serve(ctx context.Context, in io.Reader, out io.Writer) error {
	p.out = out
	if _, err := io.WriteString(out, readyLine+"\n"); err != nil {
		return fmt.Errorf("write the ready line: %w", err)
	}
	p.log.Info("ready", "coordinator", p.cfg.addr, "grpc", p.cfg.grpc, "priority", p.cfg.priority, "timeout", p.cfg.timeout)
	checkCtx, cancelCheck := context.WithCancel(ctx)
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		p.checkCoordinator(checkCtx)
	}()
	defer func() {
		cancelCheck()
		<-checked
	}()

	done := make(chan error, 1)
	go func() { done <- p.read(ctx, in) }()
	select {
	case err := <-done:
		if err != nil {
			p.log.Error("reading requests failed; finishing the requests in flight", "err", err)
		}
		n := p.close()
		p.log.Info("end of input: finishing the requests in flight", "in_flight", n)
		p.wg.Wait()
		p.log.Info("all requests answered; exiting")
		return nil
	case <-ctx.Done():
		n := p.close()
		p.log.Warn("stopping: answering the requests in flight with an error (their jobs run on in the cluster)", "in_flight", n)
		p.wg.Wait()
		return fmt.Errorf("stopped (%v) with %d request(s) in flight, answered with an error", context.Cause(ctx), n)
	}
}

// close stops new handlers and returns how many are in flight.
func (p *processor) close() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return p.inFlight
}

// checkCoordinator logs whether the coordinator answers (it does not
// delay the ready line: damocles waits only stable_wait for it).
func (p *processor) checkCoordinator(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := p.cl.Status(ctx, "")
	if err != nil {
		if ctx.Err() == nil || errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			p.log.Warn("the coordinator does not answer (yet); tasks will retry their submission", "coordinator", p.cfg.addr, "err", err)
		}
		return
	}
	var pending uint64
	for _, d := range res.Queue {
		pending += d.Pending
	}
	p.log.Info("coordinator answers", "coordinator", p.cfg.addr, "workers", len(res.Workers), "tasks_pending", pending)
}

// read dispatches each line of in until end of input (nil) or a read error.
func (p *processor) read(ctx context.Context, in io.Reader) error {
	br := bufio.NewReaderSize(in, 1<<20)
	for {
		line, tooLong, err := readLine(br, maxLineBytes)
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			p.dispatch(ctx, line, tooLong)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads up to and without the next '\n' (and a '\r' before it).
// A line longer than max is consumed whole but only its first
// idPrefixBytes are returned, with tooLong set.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, e := r.ReadSlice('\n')
		n := len(frag)
		if e == nil {
			n-- // the '\n'
		}
		if !tooLong && len(line)+n > max {
			tooLong = true
			line = line[:min(len(line), idPrefixBytes)]
		}
		if !tooLong {
			line = append(line, frag...)
		} else if room := idPrefixBytes - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
		}
		if errors.Is(e, bufio.ErrBufferFull) {
			continue
		}
		if !tooLong {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		}
		return line, tooLong, e
	}
}

// dispatch handles one line in its own goroutine, unless the processor is
// closing: then it is answered with an error at once.
func (p *processor) dispatch(ctx context.Context, line []byte, tooLong bool) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		id, _ := recoverID(line)
		p.respond(id, nil, errors.New("the processor is stopping; retry the task"))
		return
	}
	p.inFlight++
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer func() {
			p.mu.Lock()
			p.inFlight--
			p.mu.Unlock()
			p.wg.Done()
		}()
		if tooLong {
			id, _ := recoverID(line)
			p.respond(id, nil, fmt.Errorf("malformed request: the line is longer than %d bytes", maxLineBytes))
			return
		}
		id, task, err := parseRequest(line)
		if err != nil {
			p.respond(id, nil, fmt.Errorf("malformed request (%d bytes): %w", len(line), err))
			return
		}
		proof, err := p.prove(ctx, id, task)
		p.respond(id, proof, err)
	}()
}

// parseRequest decodes a request line. On failure the id is the one the
// line carries when it can still be read, else 0.
func parseRequest(line []byte) (uint64, *wireTask, error) {
	var req wireRequest
	err := json.Unmarshal(line, &req)
	var id uint64
	if req.ID != nil {
		id = *req.ID
	} else if rid, ok := recoverID(line); ok {
		id = rid
	}
	if err != nil {
		return id, nil, fmt.Errorf("not a C2 request: %v", err)
	}
	if req.ID == nil {
		return 0, nil, errors.New(`no "id"`)
	}
	if req.Task == nil {
		return id, nil, errors.New(`no "task"`)
	}
	t := req.Task
	var missing []string
	if c := bytes.TrimSpace(t.C1Out); len(c) == 0 || c[0] != '{' {
		missing = append(missing, "c1out (the SealCommitPhase1Output object)")
	}
	if t.ProverID == nil {
		missing = append(missing, "prover_id")
	}
	if t.SectorID == nil {
		missing = append(missing, "sector_id")
	}
	if t.MinerID == nil {
		missing = append(missing, "miner_id")
	}
	if len(missing) > 0 {
		return id, nil, fmt.Errorf("the C2 task lacks %v", missing)
	}
	return id, t, nil
}

// leadingID matches the start of a request as serde_json writes it: the
// id is its first field.
var leadingID = regexp.MustCompile(`^\s*\{\s*"id"\s*:\s*([0-9]{1,20})\s*[,}]`)

// recoverID reads the id of a request line that does not decode.
func recoverID(line []byte) (uint64, bool) {
	m := leadingID.FindSubmatch(line)
	if m == nil {
		return 0, false
	}
	id, err := strconv.ParseUint(string(m[1]), 10, 64)
	return id, err == nil
}

// respond writes one response line: the proof, or the error.
func (p *processor) respond(id uint64, proof []byte, err error) {
	res := wireResponse{ID: id}
	if err != nil {
		msg := "c2-damocles: " + err.Error()
		res.ErrMsg = &msg
	} else {
		res.Output = &c2Output{Proof: proof}
	}
	b, merr := json.Marshal(res)
	if merr != nil { // cannot happen: strings and integers only
		panic(merr)
	}
	b = append(b, '\n')
	p.outMu.Lock()
	_, werr := p.out.Write(b)
	p.outMu.Unlock()
	switch {
	case werr != nil:
		p.log.Error("cannot write the response", "id", id, "err", werr)
	case err != nil:
		p.log.Warn("answered with an error", "id", id, "err", err)
	default:
		p.log.Info("answered with the proof", "id", id, "proof_bytes", len(proof))
	}
}
