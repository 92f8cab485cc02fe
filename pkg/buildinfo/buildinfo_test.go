package buildinfo

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormat(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/c2cluster/c2cluster", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "f168005c7c0e9e5d0fb3a3f4f0b4a4e5b6c7d8e9"},
			{Key: "vcs.time", Value: "2026-12-04T21:58:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}
	i := FromBuildInfo(bi)
	require.Equal(t, "(devel) commit f168005c7c0e9e5d0fb3a3f4f0b4a4e5b6c7d8e9+dirty (2026-12-04T21:58:00Z) go1.26.8 linux/arm64", i.String())
	require.Equal(t, "devel-f168005c7c0e+dirty", i.Short())

	bi.Settings[5].Value = "false"
	bi.Main.Version = "v1.2.3"
	i = FromBuildInfo(bi)
	require.Equal(t, "v1.2.3 commit f168005c7c0e9e5d0fb3a3f4f0b4a4e5b6c7d8e9 (2026-12-04T21:58:00Z) go1.26.8 linux/arm64", i.String())
	require.Equal(t, "v1.2.3", i.Short())

	// No VCS stamp (a test binary, a build outside a checkout or with
	// -buildvcs=false): the commit is unknown, never "+dirty".
	i = FromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "m", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}})
	require.Equal(t, "(devel) commit unknown go1.26.8 "+runtime.GOOS+"/"+runtime.GOARCH, i.String())
	require.Equal(t, "(devel)", i.Short())

	i = FromBuildInfo(nil)
	require.Equal(t, "unknown commit unknown "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH, i.String())
}

// The test binary's own build information carries no VCS stamp (go test
// does not stamp one): Line says so in the documented shape.
func TestLineOfThisBinary(t *testing.T) {
	line := Line("c2-test")
	require.Regexp(t, `^c2-test \S+ commit (unknown|[0-9a-f]{40}(\+dirty)?)( \(\S+\))? go\S+ \S+/\S+$`, line)
	require.Contains(t, line, runtime.Version())
}

func TestRequested(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"-dir", "x", "--version"}, {"-version=true"}} {
		require.True(t, Requested(args), "%q", args)
	}
	for _, args := range [][]string{nil, {"-v"}, {"version"}, {"-version=false"}, {"--", "-version"}, {"-versions"}} {
		require.False(t, Requested(args), "%q", args)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Register(fs)
	require.NoError(t, fs.Parse([]string{"-version=false"}))
	require.NotNil(t, fs.Lookup("version"))
}

// A binary built with `go build` in a git checkout answers --version with
// the checkout's commit, +dirty exactly when git reports changes. It builds
// the smallest binary of the module (c2g-bench without cgo).
func TestBuiltBinaryCarriesTheCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	head, err := exec.Command(git, "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	porcelain := func() string {
		out, err := exec.Command(git, "-C", root, "status", "--porcelain").Output()
		require.NoError(t, err)
		return string(out)
	}
	before := porcelain()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(t.TempDir(), "c2g-bench")
	build := exec.Command(goBin, "build", "-buildvcs=true", "-o", bin, "./pkg/groth16/cuda/cmd/c2g-bench")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	if porcelain() != before {
		t.Skip("the working tree changed during the build; its state at the build is unknown")
	}
	dirty := strings.TrimSpace(before) != ""

	for _, arg := range []string{"--version", "-version"} {
		out, err = exec.Command(bin, arg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		rev := strings.TrimSpace(string(head))
		suffix := ""
		if dirty {
			suffix = `\+dirty`
		}
		// The version is the pseudo-version Go derives from the commit
		// (v0.0.0-<time>-<12 digits>, Go ≥ 1.24) or "(devel)".
		version := `(\(devel\)|v\d+\.\d+\.\d+-(\S+\.)?\d{14}-` + rev[:12] + suffix + `)`
		require.Regexp(t, `^c2g-bench `+version+` commit `+rev+suffix+` \(\S+\) `+
			regexp.QuoteMeta(runtime.Version())+" "+runtime.GOOS+"/"+runtime.GOARCH+"$", strings.TrimSpace(string(out)))
	}
}
