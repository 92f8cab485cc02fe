package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/client/proofcheck"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// verifyFlags choose how prove and await check the proof the coordinator
// returns before writing it out.
type verifyFlags struct {
	mode        string
	paramsDir   string
	officialDir string
	vkFile      string
}

func (v *verifyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&v.mode, "verify", "auto", "check the returned proof here before writing it: auto (when a verifying key is found), require (fail without one) or off")
	fs.StringVar(&v.paramsDir, "params-dir", envOr("C2_PARAMS_DIR", "params"), "folder of the test shapes' <shape>.vk, for checking the proof ($C2_PARAMS_DIR)")
	fs.StringVar(&v.officialDir, "official-params-dir", ceremony.Dir(), "Filecoin's parameter folder with the official .vk files, for checking the proof ($"+ceremony.EnvDir+")")
	fs.StringVar(&v.vkFile, "vk", "", "verifying key file to check the proof with (instead of the folders)")
}

func (v *verifyFlags) valid() error {
	switch v.mode {
	case "auto", "require", "off":
		return nil
	}
	return fmt.Errorf("%w: -verify %q is not auto, require or off", exitCode(2), v.mode)
}

// check verifies a done job's proof against doc, the document it was
// submitted with (nil: not known here). It says on stderr what it checked;
// a proof that does not verify is an error, and so is an unchecked proof
// under -verify require.
func (v *verifyFlags) check(ctx context.Context, doc []byte, st *c2clusterv1.JobStatus, stderr io.Writer) error {
	skip := func(why string) error {
		if v.mode == "require" {
			return fmt.Errorf("job %s: the proof cannot be checked here (%s) and -verify require is set", st.GetJobId(), why)
		}
		fmt.Fprintf(stderr, "proof NOT verified here: %s\n", why)
		return nil
	}
	switch {
	case v.mode == "off":
		fmt.Fprintln(stderr, "proof not verified here (-verify off)")
		return nil
	case doc == nil:
		return skip("give -c1 with the C1 output the job was submitted with")
	}
	keys := proofcheck.Keys{ParamsDir: v.paramsDir, OfficialDir: v.officialDir, VKFile: v.vkFile}
	err := client.CheckProof(ctx, keys, doc, st)
	switch {
	case err == nil:
		fmt.Fprintf(stderr, "proof verified here: every partition against the C1 output's public inputs\n")
		return nil
	case errors.Is(err, client.ErrNoVerifyingKey):
		return skip(err.Error() + "; give -vk or -params-dir / -official-params-dir")
	}
	return fmt.Errorf("%w; the proof is not written", err)
}
