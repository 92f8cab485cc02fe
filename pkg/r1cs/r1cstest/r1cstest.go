// Package r1cstest holds test helpers for circuits on pkg/r1cs: locating
// the reference R1CS (../shared/oracle, beside the repository) and
// comparing a recorded System with one of its dumps line by line.
package r1cstest

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/c2cluster/c2cluster/pkg/r1cs"
)

// OracleDir returns the reference R1CS directory, or skips the test with a
// message saying where it was looked for.
func OracleDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	// pkg/r1cs/r1cstest → repository root → ../shared/oracle
	d := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "oracle")
	if env := os.Getenv("C2_ORACLE_DIR"); env != "" {
		d = env
	}
	if _, err := os.Stat(filepath.Join(d, "README.md")); err != nil {
		t.Skipf("the reference R1CS (bellperson's) is not present at %s (set C2_ORACLE_DIR): %v", d, err)
	}
	return d
}

// CompareDump compares s (made WithNames) with the oracle dump file
// (a name in OracleDir, e.g. "poseidon-2.r1cs.txt.gz"): the header's counts
// and hash, and every constraint line, failing at the first difference
// with both lines and a few lines of context before it.
func CompareDump(t testing.TB, s *r1cs.System, file string) {
	t.Helper()
	if err := compareDump(s, filepath.Join(OracleDir(t), file)); err != nil {
		t.Fatal(err)
	}
}

// OpenDump opens the oracle dump file (a name in OracleDir) and returns a
// line scanner at its header, closed when the test ends.
func OpenDump(t testing.TB, file string) *bufio.Scanner {
	t.Helper()
	sc, closer, err := openDump(filepath.Join(OracleDir(t), file))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return sc
}

func openDump(path string) (*bufio.Scanner, io.Closer, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	gz, err := gzip.NewReader(fh)
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	return sc, fh, nil
}

func compareDump(s *r1cs.System, path string) error {
	sc, fh, err := openDump(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	if !sc.Scan() {
		return fmt.Errorf("%s: empty", path)
	}
	nIn, nAux, nC, hash, err := r1cs.ParseDumpHeader(sc.Text())
	if err != nil {
		return err
	}
	var recent []string
	n := s.NumConstraints()
	for j := 0; sc.Scan(); j++ {
		want := sc.Text()
		if j >= n {
			return fmt.Errorf("%s: the reference has more constraints (%d) than ours (%d); next reference line:\n  %s", filepath.Base(path), nC, n, want)
		}
		a, b, c := s.Row(j)
		got := r1cs.DumpLine(j, a, b, c, s.Coeffs(), s.Name(j))
		if got != want {
			return fmt.Errorf("%s: constraint %d differs\nreference: %s\nours:      %s\ncontext (ours, before):\n  %s", filepath.Base(path), j, want, got, strings.Join(recent, "\n  "))
		}
		recent = append(recent, got)
		if len(recent) > 5 {
			recent = recent[1:]
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if n != nC {
		return fmt.Errorf("%s: ours has %d constraints, the reference %d", filepath.Base(path), n, nC)
	}
	if s.NumInputs() != nIn || s.NumAux() != nAux {
		return fmt.Errorf("%s: ours has %d inputs and %d aux, the reference %d and %d", filepath.Base(path), s.NumInputs(), s.NumAux(), nIn, nAux)
	}
	if h := fmt.Sprintf("%x", s.Hash()); h != hash {
		return fmt.Errorf("%s: every line equal but hash %s, reference %s", filepath.Base(path), h, hash)
	}
	return nil
}
