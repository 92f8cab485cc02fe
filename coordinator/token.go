package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/c2cluster/c2cluster/coordinator/auth"
)

// runToken makes a bearer token: it prints the tokens file's line (which
// holds only the token's hash) and the token itself, once.
func runToken(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: coordinator token NAME SCOPES [rate=N/s|N/m|N/h] [burst=N] [max-open=N]\n\n"+
			"Prints the line to add to the coordinator's -tokens-file (the token's SHA-256, never the token),\n"+
			"then the token for the client ($C2_TOKEN or -token-file). SCOPES: comma-separated submit, read,\n"+
			"cancel, admin (docs/security.md).")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		fs.Usage()
		return fmt.Errorf("%w: usage: coordinator token NAME SCOPES [options]", exitCode(2))
	}
	token, cred := auth.NewToken()
	line := strings.Join(append([]string{fs.Arg(0), fs.Arg(1), cred}, fs.Args()[2:]...), " ")
	// The line must be one the tokens file accepts.
	if _, err := auth.ParseTokensLine(line); err != nil {
		return fmt.Errorf("%w: %v", exitCode(2), err)
	}
	fmt.Fprintln(stdout, line)
	fmt.Fprintln(stdout, token)
	return nil
}
