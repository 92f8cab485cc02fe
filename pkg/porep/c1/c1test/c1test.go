// Package c1test reads the real C1 outputs tests use: those Lotus made
// (../shared/fixtures/lotus-bench beside the repository, lotus-bench's
// Commit2In envelope), skipping with a clear message where they are absent.
package c1test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
)

// LotusFile returns the Lotus-made fixture name ("2KiB.json", "8MiB.json")
// as it is (the Commit2In envelope), or skips the test.
func LotusFile(t testing.TB, name string) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	// pkg/porep/c1/c1test → repository root → ../shared/fixtures
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..", "shared", "fixtures", "lotus-bench")
	if env := os.Getenv("C2_FIXTURES_DIR"); env != "" {
		dir = filepath.Join(env, "lotus-bench")
	}
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Skipf("the Lotus-made C1 fixtures are not present at %s (set C2_FIXTURES_DIR): %v", dir, err)
	}
	return raw
}

// LotusDoc returns the SealCommitPhase1Output JSON inside the Lotus-made
// fixture name ("2KiB.json", "8MiB.json"), or skips the test. (It decodes
// the envelope itself, independently of c1.ParseCommit2In.)
func LotusDoc(t testing.TB, name string) []byte {
	t.Helper()
	raw := LotusFile(t, name)
	var env struct{ Phase1Out string }
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	doc, err := base64.StdEncoding.DecodeString(env.Phase1Out)
	if err != nil {
		t.Fatalf("%s: Phase1Out: %v", name, err)
	}
	return doc
}

// Lotus parses the fixture's C1 output (a fresh copy every call).
func Lotus(t testing.TB, name string) *c1.Output {
	t.Helper()
	out, err := c1.ParseBytes(LotusDoc(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}
