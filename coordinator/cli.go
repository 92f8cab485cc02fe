package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// clientFlags are shared by the client subcommands.
type clientFlags struct {
	addr  string
	grpc  bool
	creds client.Credentials
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", envOr("C2_COORDINATOR", "http://127.0.0.1:8080"), "coordinator URL, https:// for TLS ($C2_COORDINATOR)")
	fs.BoolVar(&c.grpc, "grpc", false, "use gRPC instead of the Connect (HTTP/JSON-compatible) protocol")
	env := client.CredentialsFromEnv()
	c.creds.Token = env.Token // $C2_TOKEN: never a flag, which every user of the machine could read
	fs.StringVar(&c.creds.TokenFile, "token-file", env.TokenFile, "file holding the bearer token (or the token itself in $C2_TOKEN) ($C2_TOKEN_FILE)")
	fs.StringVar(&c.creds.TLS.CA, "ca", env.TLS.CA, "CA file of the coordinator's TLS certificate (default: the system's roots) ($C2_CA)")
	fs.StringVar(&c.creds.TLS.Cert, "client-cert", env.TLS.Cert, "client certificate file, for a coordinator that verifies them ($C2_CLIENT_CERT)")
	fs.StringVar(&c.creds.TLS.Key, "client-key", env.TLS.Key, "key file of -client-cert ($C2_CLIENT_KEY)")
}

func (c *clientFlags) client() (*client.Client, error) {
	opts, err := c.creds.Options()
	if err != nil {
		return nil, err
	}
	if c.grpc {
		opts = append(opts, client.WithGRPC())
	}
	return client.New(c.addr, opts...), nil
}

// submitFlags describe a submission.
type submitFlags struct {
	clientFlags
	c1File   string
	shape    string
	priority string
	key      string
	vanilla  bool
	sector   sectorFlags
	out      string
	wait     bool
	verify   verifyFlags
}

func parseSubmit(name string, args []string, stderr io.Writer, wait bool) (*submitFlags, error) {
	fs := newFlags(name, stderr)
	f := &submitFlags{wait: wait}
	f.register(fs)
	fs.StringVar(&f.c1File, "c1", "", "C1 output JSON file, or lotus-bench's Commit2In envelope around it ('-' for stdin); required")
	fs.StringVar(&f.shape, "shape", "", "expected proof shape (checked against the C1 output)")
	fs.StringVar(&f.priority, "priority", "normal", "high, normal or low")
	fs.StringVar(&f.key, "key", "", "idempotency key: resubmitting with it returns the same job")
	fs.BoolVar(&f.vanilla, "verify-vanilla", false, "ask the coordinator to check the vanilla proofs first")
	f.sector.register(fs, "the sector's miner (f01000, t01000 or the actor id); with -sector the coordinator checks the C1 output's replica id against them")
	fs.StringVar(&f.out, "out", "", "write the proof's bytes here (default: hex on stdout)")
	f.verify.register(fs)
	if !wait {
		fs.BoolVar(&f.wait, "wait", false, "wait for the proof, with progress")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.c1File == "" {
		fs.Usage()
		return nil, fmt.Errorf("%w: -c1 is required", exitCode(2))
	}
	if err := f.verify.valid(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *submitFlags) request() (*c2clusterv1.SubmitRequest, error) {
	doc, err := readC1File(f.c1File)
	if err != nil {
		return nil, err
	}
	prio, ok := map[string]c2clusterv1.Priority{"high": c2clusterv1.Priority_PRIORITY_HIGH,
		"normal": c2clusterv1.Priority_PRIORITY_NORMAL, "low": c2clusterv1.Priority_PRIORITY_LOW}[f.priority]
	if !ok {
		return nil, fmt.Errorf("%w: -priority %q is not high, normal or low", exitCode(2), f.priority)
	}
	miner, number, err := f.sector.parse()
	if err != nil {
		return nil, err
	}
	ref := &c2clusterv1.SectorRef{MinerId: miner, SectorNumber: number}
	return &c2clusterv1.SubmitRequest{C1Json: doc, Shape: f.shape, Priority: prio, IdempotencyKey: f.key,
		VerifyVanilla: f.vanilla, Sector: ref}, nil
}

// readC1File reads a C1 output file ('-': stdin) as it is.
func readC1File(name string) ([]byte, error) {
	var doc []byte
	var err error
	if name == "-" {
		doc, err = io.ReadAll(os.Stdin)
	} else {
		doc, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read C1: %w", err)
	}
	return doc, nil
}

// sectorFlags are -miner and -sector, each optional.
type sectorFlags struct{ miner, number string }

func (f *sectorFlags) register(fs *flag.FlagSet, minerHelp string) {
	fs.StringVar(&f.miner, "miner", "", minerHelp)
	fs.StringVar(&f.number, "sector", "", "the sector number (see -miner)")
}

// parse gives the miner's actor id and the sector number, nil where not
// given.
func (f *sectorFlags) parse() (miner, number *uint64, err error) {
	if f.miner != "" {
		m, err := seal.ParseMinerID(f.miner)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: -miner: %v", exitCode(2), err)
		}
		miner = &m
	}
	if f.number != "" {
		n, err := strconv.ParseUint(f.number, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: -sector %q is not a sector number", exitCode(2), f.number)
		}
		number = &n
	}
	return miner, number, nil
}

// sectorName is a job's sector as people write it ("f01000 sector 42").
func sectorName(s *c2clusterv1.SectorRef) string {
	if s == nil {
		return "not given"
	}
	miner, number := "miner not given", "not given"
	if s.MinerId != nil {
		miner = fmt.Sprintf("f0%d", *s.MinerId)
	}
	if s.SectorNumber != nil {
		number = fmt.Sprint(*s.SectorNumber)
	}
	return miner + " sector " + number
}

func runSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseSubmit("submit", args, stderr, false)
	if err != nil {
		return err
	}
	return submitAndMaybeWait(ctx, f, stdout, stderr)
}

func runProve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseSubmit("prove", args, stderr, true)
	if err != nil {
		return err
	}
	return submitAndMaybeWait(ctx, f, stdout, stderr)
}

func submitAndMaybeWait(ctx context.Context, f *submitFlags, stdout, stderr io.Writer) error {
	req, err := f.request()
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	sub, err := c.Submit(ctx, req)
	if err != nil {
		return err
	}
	dedup := ""
	if sub.Deduplicated {
		dedup = " (existing job for this idempotency key)"
	}
	fmt.Fprintf(stderr, "submitted job %s: shape %s, %d partitions%s\n", sub.JobId, sub.Shape, sub.Partitions, dedup)
	if !f.wait {
		fmt.Fprintln(stdout, sub.JobId)
		return nil
	}
	return watchAndWrite(ctx, c, sub.JobId, f.out, stdout, stderr, func(st *c2clusterv1.JobStatus) error {
		return f.verify.check(ctx, req.C1Json, st, stderr)
	})
}

// watchAndWrite shows progress lines on stderr until the job ends, then
// checks the proof (check: verifyFlags.check) and writes it.
func watchAndWrite(ctx context.Context, c *client.Client, job, out string, stdout, stderr io.Writer, check func(*c2clusterv1.JobStatus) error) error {
	st, err := c.Watch(ctx, job, func(j *c2clusterv1.JobStatus) {
		fmt.Fprintln(stderr, client.ProgressLine(j))
	})
	if err != nil {
		return err
	}
	t := st.Timings
	fmt.Fprintf(stderr, "timings: queue wait %.0f ms, synthesis %.0f ms, prove %.0f ms, lock wait %.0f ms, verify %.0f ms (sums over partitions); assemble %.0f ms; total %.0f ms\n",
		t.GetQueueWaitMs(), t.GetSynthesisMs(), t.GetProveMs(), t.GetLockWaitMs(), t.GetVerifyMs(), t.GetAssembleMs(), t.GetTotalMs())
	if st.TraceId != "" {
		fmt.Fprintf(stderr, "trace id: %s\n", st.TraceId)
	}
	if err := check(st); err != nil {
		return err
	}
	if out != "" {
		if err := os.WriteFile(out, st.Proof, 0o644); err != nil {
			return fmt.Errorf("write proof: %w", err)
		}
		fmt.Fprintf(stderr, "proof (%d bytes) written to %s\n", len(st.Proof), out)
		return nil
	}
	fmt.Fprintln(stdout, hex.EncodeToString(st.Proof))
	return nil
}

func runAwait(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("await", stderr)
	var cf clientFlags
	cf.register(fs)
	out := fs.String("out", "", "write the proof's bytes here (default: hex on stdout)")
	timeout := fs.Duration("timeout", 0, "give up after this long (0: never)")
	c1File := fs.String("c1", "", "the C1 output (or Commit2In envelope) the job was submitted with: the returned proof is checked against it before it is written")
	var vf verifyFlags
	vf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: usage: coordinator await [flags] JOB", exitCode(2))
	}
	if err := vf.valid(); err != nil {
		return err
	}
	var doc []byte
	if *c1File != "" {
		var err error
		if doc, err = readC1File(*c1File); err != nil {
			return err
		}
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	return watchAndWrite(ctx, c, fs.Arg(0), *out, stdout, stderr, func(st *c2clusterv1.JobStatus) error {
		return vf.check(ctx, doc, st, stderr)
	})
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", stderr)
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("%w: usage: coordinator status [flags] [JOB]", exitCode(2))
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	res, err := c.Status(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if j := res.Job; j != nil {
		fmt.Fprintln(stdout, client.ProgressLine(j))
		t := j.Timings
		fmt.Fprintf(stdout, "  shape %s, priority %s, sector %s, trace %s\n", j.Shape,
			strings.ToLower(strings.TrimPrefix(j.Priority.String(), "PRIORITY_")), sectorName(j.Sector), j.TraceId)
		fmt.Fprintf(stdout, "  timings (ms): queue wait %.0f, synthesis %.0f, prove %.0f, lock wait %.0f, verify %.0f, assemble %.0f, total %.0f\n",
			t.GetQueueWaitMs(), t.GetSynthesisMs(), t.GetProveMs(), t.GetLockWaitMs(), t.GetVerifyMs(), t.GetAssembleMs(), t.GetTotalMs())
	}
	fmt.Fprintf(stdout, "workers: %d\n", len(res.Workers))
	for _, w := range res.Workers {
		var resident []string
		for _, r := range w.Resident {
			resident = append(resident, r.Shape+"@"+r.Residency)
		}
		if w.HeartbeatUnixMs == 0 { // quarantined, no longer registered
			fmt.Fprintf(stdout, "  %s\n", workerLine(w))
			continue
		}
		fmt.Fprintf(stdout, "  %s host %s devices %v slots %d resident %v current %v (heartbeat %s ago)\n", w.Id, w.Host, w.Devices, w.Slots,
			resident, w.Current, time.Since(time.UnixMilli(w.HeartbeatUnixMs)).Round(time.Second))
		if q := w.Quarantine; q != nil {
			fmt.Fprintf(stdout, "    QUARANTINED by %s: %s (coordinator workers release %s)\n", q.By, q.Reason, w.Id)
		}
	}
	fmt.Fprintln(stdout, "queue:")
	if len(res.Queue) == 0 {
		fmt.Fprintln(stdout, "  empty")
	}
	for _, d := range res.Queue {
		fmt.Fprintf(stdout, "  %s/%s: %d pending, %d in flight\n", d.Shape, d.Lane, d.Pending, d.InFlight)
	}
	return nil
}

func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cancel", stderr)
	var cf clientFlags
	cf.register(fs)
	reason := fs.String("reason", "", "why (recorded on the job)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: usage: coordinator cancel [flags] JOB", exitCode(2))
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	st, err := c.Cancel(ctx, fs.Arg(0), *reason)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, client.ProgressLine(st))
	return nil
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stderr)
	var cf clientFlags
	cf.register(fs)
	state := fs.String("state", "", "only jobs in this state: queued, proving, assembling, done, failed, cancelled")
	limit := fs.Int("limit", 50, "at most this many jobs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var st c2clusterv1.JobState
	if *state != "" {
		v, ok := c2clusterv1.JobState_value["JOB_STATE_"+strings.ToUpper(*state)]
		if !ok {
			return fmt.Errorf("%w: unknown -state %q", exitCode(2), *state)
		}
		st = c2clusterv1.JobState(v)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	jobs, err := c.List(ctx, st, *limit)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		fmt.Fprintf(stdout, "%s  %s  %s\n", time.UnixMilli(j.CreatedUnixMs).Format(time.DateTime), j.Shape, client.ProgressLine(j))
	}
	return nil
}
