package docs_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/worker/cli"
)

// repoRoot is the repository root: go test runs in docs/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the docs tests must run in docs/ of the repository")
	return root
}

// markdownFiles are README.md and every .md file under docs/, relative to
// the root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// doc is one markdown file split into the lines outside fenced code
// blocks, which are the only ones whose links and headings count.
type doc struct {
	path  string   // relative to the root
	lines []string // outside code fences; "" in their place inside
}

func readDoc(t *testing.T, root, rel string) doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	require.NoError(t, err)
	d := doc{path: rel}
	fence := ""
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			d.lines = append(d.lines, "")
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			d.lines = append(d.lines, "")
			continue
		}
		// Indented code blocks stay: headings must start the line, and
		// their commands hold no [text](target) forms.
		d.lines = append(d.lines, line)
	}
	return d
}

var (
	headingRE  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	linkRE     = regexp.MustCompile(`\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\)`)
	refDefRE   = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
)

// anchor is GitHub's anchor of a heading's text: the text as rendered
// (links become their text, code spans their content, emphasis markers
// go), lower-cased, every character that is not a letter, a digit, a
// space, '-' or '_' dropped, spaces turned into '-'.
func anchor(heading string) string {
	text := linkRE.ReplaceAllString(heading, "$1")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// anchors are a document's heading anchors, with GitHub's -1, -2 … for
// repeated headings.
func (d doc) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range d.lines {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchor(m[2])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// link is one link of a document.
type link struct {
	line   int
	target string
}

// links are a document's inline links and link definitions, outside code.
func (d doc) links() []link {
	var out []link
	for i, line := range d.lines {
		// Code spans may hold brackets and parentheses that are no link.
		text := codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			out = append(out, link{i + 1, m[2]})
		}
		if m := refDefRE.FindStringSubmatch(text); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Sparse benchmark C1 (BENCHMARK INPUT) — `sealer.WriteSparseC1`": "sparse-benchmark-c1-benchmark-input--sealerwritesparsec1",
		"Field-product probes (cuda/tools, H200)":                        "field-product-probes-cudatools-h200",
		"End to end on the H200: c2-bench at 32 GiB":                     "end-to-end-on-the-h200-c2-bench-at-32-gib",
		"The interlock (`interlock:`)":                                   "the-interlock-interlock",
		"Curio's cuzk API":                                               "curios-cuzk-api",
		"`.params` (bellperson `Parameters::write`)":                     "params-bellperson-parameterswrite",
		"Single node (`coordinator run`, `make run`)":                    "single-node-coordinator-run-make-run",
		"A [linked](x.md) heading":                                       "a-linked-heading",
		"snake_case stays":                                               "snake_case-stays",
	} {
		require.Equal(t, want, anchor(heading), heading)
	}
	d := doc{lines: []string{"# A", "## B", "```", "# not a heading", "```", "## B"}}
	d.lines[3] = "" // what readDoc leaves of a fenced line
	require.Equal(t, map[string]bool{"a": true, "b": true, "b-1": true}, d.anchors())
}

// TestLinks checks every relative link of README.md and docs/**/*.md: the
// file (or folder) it names exists, and its #anchor, if any, is a heading
// of the markdown file it points at.
func TestLinks(t *testing.T) {
	root := repoRoot(t)
	docs := map[string]doc{}
	load := func(rel string) doc {
		if d, ok := docs[rel]; ok {
			return d
		}
		d := readDoc(t, root, rel)
		docs[rel] = d
		return d
	}
	checked := 0
	var bad []string
	for _, rel := range markdownFiles(t, root) {
		d := load(rel)
		for _, l := range d.links() {
			target := l.target
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: %s", rel, l.line, target)
			path, frag, _ := strings.Cut(target, "#")
			dest := rel
			if path != "" {
				dest = filepath.Join(filepath.Dir(rel), filepath.FromSlash(path))
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					bad = append(bad, where+": no such file")
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				bad = append(bad, where+": an anchor into a file that is not markdown")
				continue
			}
			if !load(dest).anchors()[frag] {
				bad = append(bad, where+": no heading with this anchor in "+filepath.ToSlash(dest))
			}
		}
	}
	require.Empty(t, bad, "broken links")
	require.Greater(t, checked, 50, "the link parser found suspiciously few links")
}

// refTable is a markdown table of configuration.md: its rows as maps of
// column name to cell.
func refTable(t *testing.T, d doc, heading string) []map[string]string {
	t.Helper()
	start := slices.IndexFunc(d.lines, func(l string) bool { return l == heading })
	require.GreaterOrEqual(t, start, 0, "%s has no heading %q", d.path, heading)
	var cols []string
	var rows []map[string]string
	for _, line := range d.lines[start+1:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		if !strings.HasPrefix(line, "|") {
			if cols != nil {
				break // the first table ends
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cols == nil:
			cols = cells
		case strings.HasPrefix(cells[0], "---"):
		default:
			row := map[string]string{}
			for i, c := range cols {
				if i < len(cells) {
					row[c] = cells[i]
				}
			}
			rows = append(rows, row)
		}
	}
	require.NotEmpty(t, rows, "%s: no table under %q", d.path, heading)
	return rows
}

// helpFlags parses a flag set's PrintDefaults output: flag name → the
// environment variable its usage names as "($VAR)" (the last such), or
// "none".
func helpFlags(t *testing.T, help string) map[string]string {
	t.Helper()
	flagLine := regexp.MustCompile(`^  -([A-Za-z0-9-]+)`)
	envRE := regexp.MustCompile(`\(\$([A-Z0-9_]+)\)`)
	out := map[string]string{}
	cur := ""
	usage := map[string]string{}
	for _, line := range strings.Split(help, "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			cur = m[1]
			usage[cur] = ""
			continue
		}
		if cur != "" && strings.HasPrefix(line, "    ") {
			usage[cur] += " " + strings.TrimSpace(line)
		}
	}
	for name, u := range usage {
		out[name] = "none"
		if ms := envRE.FindAllStringSubmatch(u, -1); ms != nil {
			out[name] = ms[len(ms)-1][1]
		}
	}
	require.NotEmpty(t, out, "no flags in the help text:\n%s", help)
	return out
}

// codes are the texts of a cell's code spans.
func codes(cell string) []string {
	var out []string
	for _, m := range codeSpanRE.FindAllString(cell, -1) {
		out = append(out, strings.Trim(m, "`"))
	}
	return out
}

// derivedVar is the variable of a flag where a row says "in capitals":
// C2_ and the flag in capitals with '_' for '-' (pkg/connflags' rule).
func derivedVar(flag string) string {
	return "C2_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// documented turns reference rows into flag → variable ("none" when the
// row names none). A row may list several flags (every code span of its
// flag cell that starts with '-'), or say "the key with `-`" (the flags
// are its YAML keys with '-' for '_'); its variable cell then lists as
// many variables in order, or says "in capitals" (derivedVar).
func documented(t *testing.T, rows []map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range rows {
		var flags []string
		if strings.Contains(r["flag"], "the key with") {
			for _, k := range codes(r["YAML key"]) {
				flags = append(flags, strings.ReplaceAll(k, "_", "-"))
			}
		} else {
			for _, c := range codes(r["flag"]) {
				if len(c) > 1 && c[0] == '-' {
					flags = append(flags, c[1:])
				}
			}
		}
		vars := codes(r["variable"])
		derived := strings.Contains(r["variable"], "in capitals")
		if !derived && len(vars) == 0 {
			vars = []string{"none"}
		}
		if !derived && len(flags) > 0 && len(vars) != len(flags) {
			t.Fatalf("configuration.md: the row of %v lists %d variables for %d flags: %q", flags, len(vars), len(flags), r["variable"])
		}
		for i, f := range flags {
			_, dup := out[f]
			require.False(t, dup, "configuration.md lists -%s twice", f)
			if derived {
				out[f] = derivedVar(f)
			} else {
				out[f] = vars[i]
			}
		}
	}
	return out
}

// requireSameFlags compares the binary's flags (and the variable each
// names) with the reference's, naming every difference.
func requireSameFlags(t *testing.T, what string, binary, doc map[string]string) {
	t.Helper()
	var diffs []string
	for f, v := range binary {
		dv, ok := doc[f]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("-%s (variable %s) is a flag of %s but not in docs/configuration.md", f, v, what))
		case dv != v:
			diffs = append(diffs, fmt.Sprintf("-%s: docs/configuration.md says variable %s, %s's help says %s", f, dv, what, v))
		}
	}
	for f := range doc {
		if _, ok := binary[f]; !ok {
			diffs = append(diffs, fmt.Sprintf("-%s is in docs/configuration.md but not a flag of %s", f, what))
		}
	}
	sort.Strings(diffs)
	require.Empty(t, diffs)
}

// yamlKeys are the YAML keys of a struct type, inline structs included.
func yamlKeys(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case opts == "inline":
			out = append(out, yamlKeys(f.Type)...)
		case name != "":
			out = append(out, name)
		}
	}
	return out
}

// TestConfigurationReference checks docs/configuration.md against the
// binaries: the worker's flags (its own -h, run in process) and YAML keys
// (cli.File), and `coordinator serve -h` of a freshly built coordinator.
func TestConfigurationReference(t *testing.T) {
	root := repoRoot(t)
	ref := readDoc(t, root, filepath.Join("docs", "configuration.md"))

	t.Run("worker", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		rc := cli.Main([]string{"-h"}, &stdout, &stderr, func(string) (string, bool) { return "", false })
		require.Equal(t, 0, rc, stderr.String())
		rows := refTable(t, ref, "## Worker (`worker`)")
		requireSameFlags(t, "worker", helpFlags(t, stderr.String()), documented(t, rows))

		var keys []string
		for _, r := range rows {
			keys = append(keys, codes(r["YAML key"])...)
		}
		want := yamlKeys(reflect.TypeFor[cli.File]())
		sort.Strings(keys)
		sort.Strings(want)
		require.Equal(t, want, keys, "YAML keys of docs/configuration.md against cli.File's")
	})

	t.Run("coordinator serve", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the coordinator; skipped with -short")
		}
		bin := filepath.Join(t.TempDir(), "coordinator")
		build := exec.Command("go", "build", "-o", bin, "./coordinator")
		build.Dir = root
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build ./coordinator:\n%s", out)
		serve := exec.Command(bin, "serve", "-h")
		serve.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "C2_") })
		help, err := serve.CombinedOutput()
		require.NoError(t, err, "coordinator serve -h:\n%s", help)
		rows := refTable(t, ref, "## Coordinator (`coordinator serve`)")
		requireSameFlags(t, "coordinator serve", helpFlags(t, string(help)), documented(t, rows))
	})
}

// TestReferencedDocsExist checks that every docs/… file the repository's
// sources, scripts and documents name exists, and that none cites a
// design document by section number that the repository does not hold.
func TestReferencedDocsExist(t *testing.T) {
	root := repoRoot(t)
	ref := regexp.MustCompile(`docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(?:md|json|log|txt)`)
	design := "DESIGN" + " §" // split so that this file does not match itself
	exts := []string{".go", ".md", ".sh", ".cu", ".cuh", ".yml", ".yaml", ".Dockerfile", ".service", ".env", ".toml"}
	skip := map[string]bool{".git": true, "bin": true, ".c2": true, ".devbuild": true, ".devpack": true, "node_modules": true}
	var bad []string
	files := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[d.Name()] || (p != root && strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "Makefile" && !slices.ContainsFunc(exts, func(e string) bool { return strings.HasSuffix(d.Name(), e) }) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range ref.FindAllString(line, -1) {
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m))); err != nil {
					bad = append(bad, fmt.Sprintf("%s:%d: %s does not exist", rel, i+1, m))
				}
			}
			if strings.Contains(line, design) {
				bad = append(bad, fmt.Sprintf("%s:%d: cites %q, a document the repository does not hold", rel, i+1, design))
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the walk found suspiciously few files")
	require.Empty(t, bad)
}
