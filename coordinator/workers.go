package main

import (
	"context"
	"fmt"
	"io"
	"time"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// runWorkers lists the workers with their trust state, or quarantines or
// releases one.
func runWorkers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("workers", stderr)
	var cf clientFlags
	cf.register(fs)
	reason := fs.String("reason", "", "why (quarantine)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: coordinator workers [flags] [list | quarantine ID | release ID]\n\n"+
			"list: the workers, their keys and bad proofs, and the quarantined ones.\n"+
			"quarantine ID: stop a worker from taking work (-reason).\n"+
			"release ID: lift a worker's quarantine and clear its count of bad proofs.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	// Flags may come before, between or after the words.
	var words []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		words, rest = append(words, fs.Arg(0)), fs.Args()[1:]
	}
	verb := "list"
	if len(words) > 0 {
		verb = words[0]
	}
	want, ok := map[string]int{"list": 1, "quarantine": 2, "release": 2}[verb]
	if !ok || max(len(words), 1) != want {
		fs.Usage()
		return fmt.Errorf("%w: usage: coordinator workers [list | quarantine ID | release ID]", exitCode(2))
	}
	id := ""
	if len(words) > 1 {
		id = words[1]
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch verb {
	case "quarantine":
		q, err := c.QuarantineWorker(ctx, id, *reason)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "worker %s quarantined since %s by %s: %s\n", id,
			time.UnixMilli(q.SinceUnixMs).Format(time.DateTime), q.By, q.Reason)
		return nil
	case "release":
		released, was, err := c.ReleaseWorker(ctx, id)
		if err != nil {
			return err
		}
		if !released {
			fmt.Fprintf(stdout, "worker %s was not quarantined (its count of bad proofs is cleared)\n", id)
			return nil
		}
		fmt.Fprintf(stdout, "worker %s released (it was quarantined by %s: %s); it takes work again at its next heartbeat unless its key still differs from the coordinator's\n",
			id, was.By, was.Reason)
		return nil
	}
	res, err := c.Status(ctx, "")
	if err != nil {
		return err
	}
	for _, w := range res.Workers {
		fmt.Fprintln(stdout, workerLine(w))
	}
	if len(res.Workers) == 0 {
		fmt.Fprintln(stdout, "no workers")
	}
	return nil
}

// workerLine is one worker in `coordinator workers`.
func workerLine(w *c2clusterv1.WorkerInfo) string {
	state := "ok"
	if q := w.Quarantine; q != nil {
		state = fmt.Sprintf("QUARANTINED since %s by %s: %s", time.UnixMilli(q.SinceUnixMs).Format(time.DateTime), q.By, q.Reason)
	}
	seen := "not registered"
	if w.HeartbeatUnixMs > 0 {
		seen = fmt.Sprintf("heartbeat %s ago", time.Since(time.UnixMilli(w.HeartbeatUnixMs)).Round(time.Second))
	}
	keys := ""
	for _, k := range w.Keys {
		keys += fmt.Sprintf(" key %s=%s", k.Shape, k.Fingerprint)
	}
	return fmt.Sprintf("%s  %s  bad proofs %d  %s%s", w.Id, seen, w.BadProofs, state, keys)
}
