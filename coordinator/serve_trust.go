package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/c2cluster/c2cluster/coordinator/server"
)

// registerTrustFlags adds the flags of the proof-trust settings
// (server.TrustConfig) to serve.
func registerTrustFlags(fs *flag.FlagSet, c *server.TrustConfig) error {
	for _, f := range []struct {
		name, env, help string
		def             int
		dst             *int
	}{
		{"max-bad-proofs", "C2_MAX_BAD_PROOFS", "a job fails when this many proofs of one of its partitions failed verification; before that a bad partition is re-queued, excluding the workers that made its bad proofs", server.MaxBadProofsDefault, &c.MaxBadProofs},
		{"quarantine-after", "C2_QUARANTINE_AFTER", "quarantine a worker once this many of its partition proofs failed verification (until `coordinator workers release`)", server.QuarantineAfterDefault, &c.QuarantineAfter},
	} {
		v, err := strconv.Atoi(envOr(f.env, strconv.Itoa(f.def)))
		if err != nil || v < 1 {
			return fmt.Errorf("%s: %q is not a number ≥ 1", f.env, envOr(f.env, ""))
		}
		fs.IntVar(f.dst, f.name, v, f.help+" ($"+f.env+")")
	}
	return nil
}
