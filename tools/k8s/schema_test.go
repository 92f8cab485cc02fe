package k8s

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// kubeReleases are the Kubernetes releases the manifests are validated
// against: an older one still common in managed clusters and the newest the
// module proxy serves. Their JSON schemas are made here from the release's
// own OpenAPI v2 document, api/openapi-spec/swagger.json of the
// k8s.io/kubernetes module (the file kubeconform's published schemas are
// converted from), downloaded with `go mod download` like any module and
// pinned by its SHA-256.
var kubeReleases = []struct {
	version string // without the v
	sha256  string // of api/openapi-spec/swagger.json
}{
	{"1.32.13", "2335b4e7f79df85b20066164b14d8f02dd077dee7cd8c7b7fb425009c9837e85"},
	{"1.37.2", "465276aedf437726de5a6ed23a41b86d78bb0d347edf251a755ae26a93cdd8a6"},
}

// openAPI is one release's definitions, indexed by group/version/kind.
type openAPI struct {
	version string
	defs    map[string]map[string]any
	byGVK   map[string]string // "<apiVersion>|<kind>" -> definition name
}

var (
	openAPIOnce sync.Map // version -> *openAPIEntry
)

type openAPIEntry struct {
	once sync.Once
	api  *openAPI
	err  error
}

// loadOpenAPI returns a release's definitions (downloaded and parsed once
// per test binary).
func loadOpenAPI(t *testing.T, version, sum string) *openAPI {
	t.Helper()
	e, _ := openAPIOnce.LoadOrStore(version, &openAPIEntry{})
	entry := e.(*openAPIEntry)
	entry.once.Do(func() { entry.api, entry.err = fetchOpenAPI(version, sum) })
	if entry.err != nil {
		t.Fatal(entry.err)
	}
	return entry.api
}

func goCommand() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func fetchOpenAPI(version, sum string) (*openAPI, error) {
	mod := "k8s.io/kubernetes@v" + version
	// Outside any module, so the download neither reads nor writes this
	// module's go.mod; the go command checks the zip against the checksum
	// database as for every module.
	cmd := exec.Command(goCommand(), "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GO111MODULE=on")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("go mod download %s: %v %s%s", mod, err, msg, out)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("go mod download %s: %v", mod, err)
	}
	if info.Error != "" || info.Dir == "" {
		return nil, fmt.Errorf("go mod download %s: %s", mod, info.Error)
	}
	path := filepath.Join(info.Dir, "api", "openapi-spec", "swagger.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(b)
	if got := hex.EncodeToString(h[:]); got != sum {
		return nil, fmt.Errorf("%s: SHA-256 %s, want %s", path, got, sum)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	api := &openAPI{version: version, defs: doc.Definitions, byGVK: map[string]string{}}
	for name, d := range doc.Definitions {
		gvks, _ := d["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			group, _ := m["group"].(string)
			ver, _ := m["version"].(string)
			kind, _ := m["kind"].(string)
			av := ver
			if group != "" {
				av = group + "/" + ver
			}
			api.byGVK[av+"|"+kind] = name
		}
	}
	if len(api.byGVK) < 50 {
		return nil, fmt.Errorf("%s: only %d kinds", path, len(api.byGVK))
	}
	return api, nil
}

// schemaLocation is the kubeconform schema location (a template) of the
// files writeSchemas makes under dir.
func schemaLocation(dir string) string {
	return filepath.Join(dir, "{{ .NormalizedKubernetesVersion }}{{ .StrictSuffix }}", "{{ .ResourceKind }}{{ .KindSuffix }}.json")
}

// writeSchemas writes, for each "<apiVersion>|<kind>" of kinds the release
// defines, a strict JSON schema (draft 4) where kubeconform looks for it:
// dir/v<version>-strict/<kind><-group>-<version>.json. A kind the release
// does not define gets no file, so kubeconform reports it as having no
// schema.
//
// The conversion is the one kubeconform's published schemas go through
// (openapi2jsonschema --strict): every object schema with properties gets
// additionalProperties: false (unknown fields are errors), int-or-string
// becomes string or integer, a quantity string or number, and apiVersion and
// kind are pinned to the resource's own. Referenced definitions are copied
// into the file's "definitions", so each file stands alone.
func (a *openAPI) writeSchemas(dir string, kinds []string) error {
	out := filepath.Join(dir, "v"+a.version+"-strict")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, k := range kinds {
		name, ok := a.byGVK[k]
		if !ok {
			continue
		}
		apiVersion, kind, _ := strings.Cut(k, "|")
		s := a.schemaFor(name, apiVersion, kind)
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, fileName(apiVersion, kind)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fileName is kubeconform's name for a kind's schema: the kind, the first
// label of its group and its version, lower case (registry.schemaPath).
func fileName(apiVersion, kind string) string {
	group, version, hasGroup := strings.Cut(apiVersion, "/")
	suffix := "-" + strings.ToLower(strings.Split(group, ".")[0])
	if hasGroup {
		suffix += "-" + strings.ToLower(version)
	}
	return strings.ToLower(kind) + suffix + ".json"
}

const (
	defPrefix   = "#/definitions/"
	intOrString = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
	quantity    = "io.k8s.apimachinery.pkg.api.resource.Quantity"
)

func (a *openAPI) schemaFor(name, apiVersion, kind string) map[string]any {
	refs := map[string]bool{}
	root := convertSchema(a.defs[name], refs)
	props, _ := root["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		root["properties"] = props
	}
	props["apiVersion"] = map[string]any{"type": "string", "enum": []any{apiVersion}}
	props["kind"] = map[string]any{"type": "string", "enum": []any{kind}}
	root["$schema"] = "http://json-schema.org/draft-04/schema#"
	defs := map[string]any{}
	for len(refs) > 0 {
		names := make([]string, 0, len(refs))
		for n := range refs {
			names = append(names, n)
		}
		sort.Strings(names)
		refs = map[string]bool{}
		for _, n := range names {
			if _, done := defs[n]; done {
				continue
			}
			more := map[string]bool{}
			defs[n] = a.definition(n, more)
			for m := range more {
				if _, done := defs[m]; !done {
					refs[m] = true
				}
			}
		}
	}
	root["definitions"] = defs
	return root
}

func (a *openAPI) definition(name string, refs map[string]bool) map[string]any {
	switch name {
	case quantity:
		// "1", "500m", "16Gi" or a bare number: the API server takes both.
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
	case intOrString:
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	}
	d, ok := a.defs[name]
	if !ok {
		// A dangling reference: a schema that matches nothing.
		return map[string]any{"not": map[string]any{}}
	}
	return convertSchema(d, refs)
}

// convertSchema copies an OpenAPI v2 schema into a JSON schema, walking
// only the keywords that hold schemas (so a field that happens to be named
// "properties" or "format" is left alone), and records the definitions it
// references.
func convertSchema(in map[string]any, refs map[string]bool) map[string]any {
	out := make(map[string]any, len(in)+1)
	for k, v := range in {
		switch k {
		case "properties", "patternProperties", "definitions":
			m, _ := v.(map[string]any)
			c := make(map[string]any, len(m))
			for name, s := range m {
				if sm, ok := s.(map[string]any); ok {
					c[name] = convertSchema(sm, refs)
				}
			}
			out[k] = c
		case "items", "additionalProperties", "not":
			if sm, ok := v.(map[string]any); ok {
				out[k] = convertSchema(sm, refs)
			} else if arr, ok := v.([]any); ok {
				out[k] = convertList(arr, refs)
			} else {
				out[k] = v
			}
		case "allOf", "anyOf", "oneOf":
			arr, _ := v.([]any)
			out[k] = convertList(arr, refs)
		case "$ref":
			s, _ := v.(string)
			refs[strings.TrimPrefix(s, defPrefix)] = true
			out[k] = s
		default:
			out[k] = v
		}
	}
	if f, _ := out["format"].(string); f == "int-or-string" {
		delete(out, "type")
		delete(out, "format")
		out["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
	}
	if _, has := out["properties"]; has {
		if _, set := out["additionalProperties"]; !set {
			out["additionalProperties"] = false
		}
	}
	return out
}

func convertList(arr []any, refs map[string]bool) []any {
	c := make([]any, 0, len(arr))
	for _, s := range arr {
		if sm, ok := s.(map[string]any); ok {
			c = append(c, convertSchema(sm, refs))
		} else {
			c = append(c, s)
		}
	}
	return c
}
