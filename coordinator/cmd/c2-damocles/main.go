// Command c2-damocles is a damocles external C2 processor that proves on a
// c2cluster coordinator: damocles-worker starts it as the child process of a
// [[processors.c2]] block, and every C2 task it is handed is submitted to
// the coordinator and answered with the cluster's verified proof.
//
// The protocol is damocles' (vc-processors core/ext): the child prints the
// ready line "c2 processor ready", then reads one JSON request per line on
// stdin,
//
//	{"id":7,"task":{"c1out":{…SealCommitPhase1Output…},"prover_id":[32 bytes],"sector_id":42,"miner_id":1000}}
//
// and writes one JSON response per line on stdout, with the request's id:
//
//	{"id":7,"err_msg":null,"output":{"proof":[…bytes…]}}
//	{"id":7,"err_msg":"c2-damocles: …","output":null}
//
// Requests are handled concurrently and answered as they finish, in any
// order (damocles matches responses to requests by id). A line that is not
// a request is answered with an error response: with its id when the id can
// still be read from the line, else with id 0 (an id damocles never uses, so
// it drops it); the processor keeps serving. Only the ready line and the
// responses go to stdout; progress and diagnostics go to stderr, which
// damocles-worker passes on to its own log.
//
// For each task the processor checks, before anything is sent:
//
//   - prover_id is the prover id of miner_id (filecoin's rule: the actor id
//     as an unsigned varint, zero-padded to 32 bytes);
//   - the C1 output's replica_id is derived from that prover id, sector_id,
//     the C1's ticket and comm_d and the registered proof's porep id, i.e.
//     the C1 belongs to this miner's sector sector_id.
//
// It then submits the C1 output (the c1out object, byte for byte the JSON
// that rust-fil-proofs writes) with SubmitRequest.sector = {miner_id,
// sector_id}, so that the coordinator checks the replica id too, and an
// idempotency key of miner, sector and the C1's SHA-256: a damocles retry of
// the same sector attaches to the job already running (or done) instead of
// proving twice; only a job that ended failed or cancelled is submitted
// afresh. It waits for the job (Await, progress polled and logged to
// stderr) and answers with the proof: the partitions' 192-byte Groth16
// proofs in partition order, which the coordinator verified.
//
// End of input (damocles closed stdin) stops reading; the requests in
// flight are finished and answered, then the process exits 0. SIGINT or
// SIGTERM answer the requests in flight with an error at once and exit 1.
// Neither cancels a job on the coordinator: it runs on, and a retry of the
// sector (same idempotency key) picks its proof up.
//
// Configuration is by flags, each with an environment variable; `c2-damocles
// -h` prints them and the damocles configuration block to use.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/c2cluster/c2cluster/pkg/buildinfo"
	"github.com/c2cluster/c2cluster/pkg/client"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Defaults of the flags.
const (
	addrDefault     = "http://127.0.0.1:8080"
	priorityDefault = "normal"
	timeoutDefault  = 2 * time.Hour
	progressDefault = 30 * time.Second
)

var priorities = map[string]c2clusterv1.Priority{
	"high":   c2clusterv1.Priority_PRIORITY_HIGH,
	"normal": c2clusterv1.Priority_PRIORITY_NORMAL,
	"low":    c2clusterv1.Priority_PRIORITY_LOW,
}

// config is the parsed command line.
type config struct {
	addr          string
	grpc          bool
	priority      string
	timeout       time.Duration
	progress      time.Duration
	verifyVanilla bool
	// creds are the bearer token and TLS files; clientOpts what they give.
	creds      client.Credentials
	clientOpts []client.Option
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run is the whole command: flags, then the processor until end of input
// (exit 0) or ctx ends (exit 1). Usage errors exit 2 before the ready line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if buildinfo.Requested(args) {
		fmt.Fprintln(stdout, buildinfo.Line("c2-damocles"))
		return 0
	}
	cfg, err := parseFlags(args, stdout, stderr, getenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "c2-damocles: %v\n", err)
		return 2
	}
	p := newProcessor(cfg, stderr)
	if err := p.serve(ctx, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "c2-damocles: %v\n", err)
		return 1
	}
	return 0
}

// envDefaults reads the flags' defaults from the environment and collects
// invalid values; each is reported after the flags are parsed, and only
// when its flag was not given (a flag on the command line wins over its
// variable).
type envDefaults struct {
	getenv func(string) string
	bad    map[string]error
}

func (e *envDefaults) str(name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}

func (e *envDefaults) duration(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.bad[name] = fmt.Errorf("$%s=%q is not a duration (e.g. 90m, 2h)", name, v)
		return def
	}
	return d
}

func (e *envDefaults) boolean(name string) bool {
	v := e.getenv(name)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		e.bad[name] = fmt.Errorf("$%s=%q is not a boolean (true, false, 1, 0)", name, v)
	}
	return b
}

// flagEnv names each flag's environment variable.
var flagEnv = map[string]string{
	"addr": "C2_COORDINATOR", "grpc": "C2_GRPC", "priority": "C2_PRIORITY", "timeout": "C2_TIMEOUT",
	"progress": "C2_PROGRESS", "verify-vanilla": "C2_VERIFY_VANILLA",
	"token-file": client.EnvTokenFile, "ca": client.EnvCA, "client-cert": client.EnvCert, "client-key": client.EnvKey,
}

// parseFlags reads the command line; -h prints the usage and the damocles
// configuration block to stdout (flag.ErrHelp), a usage error prints the
// usage to stderr.
func parseFlags(args []string, stdout, stderr io.Writer, getenv func(string) string) (*config, error) {
	env := &envDefaults{getenv: getenv, bad: map[string]error{}}
	cfg := &config{}
	fs := flag.NewFlagSet("c2-damocles", flag.ContinueOnError)
	fs.SetOutput(stderr)
	buildinfo.Register(fs)
	fs.StringVar(&cfg.addr, "addr", env.str("C2_COORDINATOR", addrDefault), "coordinator URL ($C2_COORDINATOR)")
	fs.BoolVar(&cfg.grpc, "grpc", env.boolean("C2_GRPC"), "use gRPC instead of the Connect (HTTP/JSON-compatible) protocol ($C2_GRPC)")
	fs.StringVar(&cfg.priority, "priority", env.str("C2_PRIORITY", priorityDefault), "queue lane of the jobs: high, normal or low ($C2_PRIORITY)")
	fs.DurationVar(&cfg.timeout, "timeout", env.duration("C2_TIMEOUT", timeoutDefault),
		"answer a task with an error when its proof is not there after this long; the job runs on and a retry resumes it (0: wait forever) ($C2_TIMEOUT)")
	fs.DurationVar(&cfg.progress, "progress", env.duration("C2_PROGRESS", progressDefault),
		"log each job's progress to stderr this often when it changed (0: only submission and end) ($C2_PROGRESS)")
	fs.BoolVar(&cfg.verifyVanilla, "verify-vanilla", env.boolean("C2_VERIFY_VANILLA"),
		"ask the coordinator to check the vanilla proofs before accepting a job ($C2_VERIFY_VANILLA)")
	cfg.creds.Token = env.str(client.EnvToken, "") // never a flag: a command line is visible to every user
	fs.StringVar(&cfg.creds.TokenFile, "token-file", env.str(client.EnvTokenFile, ""), "file holding the coordinator's bearer token (or the token itself in $C2_TOKEN) ($C2_TOKEN_FILE)")
	fs.StringVar(&cfg.creds.TLS.CA, "ca", env.str(client.EnvCA, ""), "CA file of an https:// coordinator's certificate (default: the system's roots) ($C2_CA)")
	fs.StringVar(&cfg.creds.TLS.Cert, "client-cert", env.str(client.EnvCert, ""), "client certificate file, for a coordinator that verifies them ($C2_CLIENT_CERT)")
	fs.StringVar(&cfg.creds.TLS.Key, "client-key", env.str(client.EnvKey, ""), "key file of -client-cert ($C2_CLIENT_KEY)")
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		w := stderr
		if errors.Is(err, flag.ErrHelp) {
			w = stdout
		}
		usage(w, fs, cfg)
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, v := range flagEnv {
		if err := env.bad[v]; err != nil && !set[name] {
			return nil, err
		}
	}
	// damocles-worker runs a processor with the arguments "processor c2"
	// when its block sets bin but no args: accept exactly those.
	if rest := fs.Args(); len(rest) > 0 && !(len(rest) == 2 && rest[0] == "processor" && rest[1] == "c2") {
		return nil, fmt.Errorf("unexpected arguments %q (flags go before them; damocles' default arguments \"processor c2\" alone are accepted)", rest)
	}
	if _, ok := priorities[cfg.priority]; !ok {
		return nil, fmt.Errorf("-priority %q is not high, normal or low", cfg.priority)
	}
	if cfg.timeout < 0 || cfg.progress < 0 {
		return nil, errors.New("-timeout and -progress must not be negative")
	}
	if !strings.HasPrefix(cfg.addr, "http://") && !strings.HasPrefix(cfg.addr, "https://") {
		return nil, fmt.Errorf("-addr %q is not an http:// or https:// URL", cfg.addr)
	}
	opts, err := cfg.creds.Options()
	if err != nil {
		return nil, err
	}
	cfg.clientOpts = opts
	return cfg, nil
}

func (c *config) client() *client.Client {
	opts := c.clientOpts
	if c.grpc {
		opts = append(opts[:len(opts):len(opts)], client.WithGRPC())
	}
	return client.New(c.addr, opts...)
}

// usage prints the flags and the damocles configuration block, filled in
// with this binary's path and the flags given so far.
func usage(w io.Writer, fs *flag.FlagSet, cfg *config) {
	fmt.Fprint(w, `c2-damocles: a damocles external C2 processor proving on a c2cluster coordinator.

damocles-worker starts it; it prints "c2 processor ready", reads one C2 request
per line on stdin and answers each on stdout with the same id. Progress and
errors go to stderr. It checks prover_id against miner_id and the C1's
replica_id against prover, sector and ticket before submitting; the job's
idempotency key (miner, sector, SHA-256 of the C1) makes a retry attach to the
running job instead of proving twice.

Flags (each also read from its environment variable):
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nIn damocles-worker's configuration (damocles-worker.toml):\n\n%s", damoclesSnippet(cfg))
}

// damoclesSnippet is the [[processors.c2]] block that runs this binary
// with cfg's coordinator and priority.
func damoclesSnippet(cfg *config) string {
	bin := "/usr/local/bin/c2-damocles"
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) == "c2-damocles" {
		bin = exe
	}
	var b strings.Builder
	fmt.Fprintf(&b, `[[processors.c2]]
bin = %q
args = ["-priority", %q, "-timeout", %q]
envs = { C2_COORDINATOR = %q }
# no concurrent limit, cgroup.cpuset, CUDA_VISIBLE_DEVICES or GPU lock: the
# process only waits on the coordinator; auto_restart (default true) and
# stable_wait (default 5s; the ready line comes at once) need no change

# optional: how many of this worker's sectors may be in C2 at once (each only
# waits on the cluster here)
# [processors.limitation.concurrent]
# c2 = 8
`, bin, cfg.priority, cfg.timeout.String(), cfg.addr)
	return b.String()
}
