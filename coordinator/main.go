// Command coordinator is the c2cluster coordinator and its client.
//
//	coordinator serve  [flags]            run the coordinator (API, assembler, dead letters, /metrics)
//	coordinator submit -c1 FILE [flags]   submit a C1 output (optionally wait for the proof)
//	coordinator prove  -c1 FILE [flags]   submit and wait, with progress
//	coordinator await  JOB [flags]        wait for a job, with progress, and write its proof
//	coordinator status [JOB]              a job's status, the workers and the queue
//	coordinator cancel JOB [-reason R]    cancel a job
//	coordinator list   [-state S]         recent jobs
//	coordinator seal   -shape S [-sparse]  seal a test sector, or write a sparse benchmark C1, as C1 JSON
//	coordinator circuit -shape S [-dump F] print the partition circuit's counts, densities and R1CS hash
//	coordinator run    [flags]            single node: everything in one process, proves a test sector (README's `make run`)
//	coordinator verify -proof FILE [flags] check a sector's final proof as Filecoin's verify_seal does
//	coordinator token NAME SCOPES         make an API bearer token and its tokens-file line
//	coordinator version                   module version, VCS commit and Go version (also -version, --version)
//
// Run `coordinator help` or `coordinator CMD -h` for the flags. Every flag
// has an environment variable (named in its help) so containers need no
// command line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/c2cluster/c2cluster/pkg/buildinfo"
	"github.com/c2cluster/c2cluster/worker/singlenode"
)

// command is one subcommand. New ones (seal, setup) are one entry each.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"serve":   {"run the coordinator: API (gRPC + HTTP/JSON), assembler, dead letters, /metrics", runServe},
	"submit":  {"submit a C1 output; -wait to wait for the proof", runSubmit},
	"prove":   {"submit a C1 output and wait for its proof, with progress", runProve},
	"await":   {"wait for a job with progress and write its proof", runAwait},
	"status":  {"show a job, the workers and the queue depth", runStatus},
	"cancel":  {"cancel a job", runCancel},
	"list":    {"list recent jobs", runList},
	"workers": {"list workers with their keys and quarantine; quarantine ID or release ID", runWorkers},
	"seal":    {"seal a sector (or -sparse: a benchmark input of any shape) and write its C1 JSON", runSeal},
	"circuit": {"print a shape's partition circuit (counts, densities, R1CS hash) without proving; -dump writes it whole", runCircuit},
	"verify":  {"check a sealed sector's final C2 proof as Filecoin's verify_seal does", runVerify},
	"token":   {"make an API bearer token: the tokens file's line (its hash) and the token", runToken},
	"run":     {"single node: start Redis, NATS, Jaeger, the coordinator and a CPU worker; prove a sealed test sector; print proof and trace", singlenode.Command},
}

func main() { os.Exit(runWithSignals(os.Args[1:], os.Stdout, os.Stderr)) }

// runWithSignals runs a command line until it ends or SIGINT or SIGTERM
// ends its context, and returns the exit code: a command that stops
// cleanly on the signal (serve, run -keep) exits 0.
func runWithSignals(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdout, stderr)
}

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "version" || buildinfo.Requested(args[:1])) {
		fmt.Fprintln(stdout, buildinfo.Line("coordinator"))
		return 0
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "coordinator: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "coordinator %s: %v\n", args[0], err)
		var ex exitCode
		if errors.As(err, &ex) {
			return int(ex)
		}
		return 1
	}
	return 0
}

// exitCode lets a command choose its exit status (usage errors: 2).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: coordinator COMMAND [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "  %-8s %s\n", "version", "print the version: module, VCS commit, Go (also -version, --version)")
	fmt.Fprintln(w, "\nRun 'coordinator COMMAND -h' for a command's flags.")
}

// envOr returns the environment variable's value, or def.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("coordinator "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
