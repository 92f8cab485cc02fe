// Command promql lists the metric selectors of every PromQL expression in
// Prometheus rule files, promtool rule-test files and Grafana dashboards,
// as JSON on stdout, parsed by Prometheus's own PromQL parser. The test
// pkg/telemetry/monitoring_test.go runs it and checks each selector against
// the metrics the binaries register.
//
//	go -C tools/promql run . deploy/prometheus/rules.yml deploy/grafana/dashboards/c2cluster.json
//
// A file it cannot read or an expression it cannot parse is an error (exit
// status 1), with the file and the place named.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// Matcher is one label matcher of a selector.
type Matcher struct {
	Name  string `json:"name"`
	Type  string `json:"type"` // =, !=, =~, !~
	Value string `json:"value"`
}

// Selector is one vector or matrix selector of an expression.
type Selector struct {
	Metric   string    `json:"metric"` // empty when only matchers name the series
	Matchers []Matcher `json:"matchers"`
}

// Expr is one expression found in a file.
type Expr struct {
	File      string     `json:"file"`
	Where     string     `json:"where"` // rule, panel or variable
	Expr      string     `json:"expr"`
	Selectors []Selector `json:"selectors"`
}

var pql = parser.NewParser(parser.Options{})

func main() {
	var out []Expr
	for _, f := range os.Args[1:] {
		es, err := file(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "promql: %s: %v\n", f, err)
			os.Exit(1)
		}
		out = append(out, es...)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "promql:", err)
		os.Exit(1)
	}
}

func file(path string) ([]Expr, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []Expr // expressions before parsing
	switch ext := filepath.Ext(path); ext {
	case ".json":
		raw, err = dashboard(data)
	case ".yml", ".yaml":
		raw, err = ruleOrTestFile(data)
	default:
		err = fmt.Errorf("unknown file type %q", ext)
	}
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("no expressions found")
	}
	for i := range raw {
		raw[i].File = path
		sels, err := selectors(raw[i].Expr, raw[i].Where)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", raw[i].Where, err)
		}
		raw[i].Selectors = sels
	}
	return raw, nil
}

// ruleOrTestFile reads a rule file (groups → rules → expr) or a promtool
// test file (tests → input_series → series, promql_expr_test → expr).
func ruleOrTestFile(data []byte) ([]Expr, error) {
	var doc struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert  string `yaml:"alert"`
				Record string `yaml:"record"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
		Tests []struct {
			Name        string `yaml:"name"`
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
			PromQLExprTest []struct {
				Expr string `yaml:"expr"`
			} `yaml:"promql_expr_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []Expr
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			out = append(out, Expr{Where: "group " + g.Name + ", rule " + r.Alert + r.Record, Expr: r.Expr})
		}
	}
	for i, t := range doc.Tests {
		where := fmt.Sprintf("test %d (%s)", i+1, t.Name)
		for _, s := range t.InputSeries {
			out = append(out, Expr{Where: where + ", input series", Expr: s.Series})
		}
		for _, e := range t.PromQLExprTest {
			out = append(out, Expr{Where: where + ", promql_expr_test", Expr: e.Expr})
		}
	}
	return out, nil
}

// dashboard reads a Grafana dashboard: every panel target's expr (rows and
// nested panels included) and every query variable's query.
func dashboard(data []byte) ([]Expr, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []Expr
	var panels func(ps []any)
	panels = func(ps []any) {
		for _, p := range ps {
			pm, _ := p.(map[string]any)
			title, _ := pm["title"].(string)
			targets, _ := pm["targets"].([]any)
			for _, t := range targets {
				tm, _ := t.(map[string]any)
				if e, ok := tm["expr"].(string); ok {
					ref, _ := tm["refId"].(string)
					out = append(out, Expr{Where: fmt.Sprintf("panel %q, target %s", title, ref), Expr: e})
				}
			}
			if sub, ok := pm["panels"].([]any); ok {
				panels(sub)
			}
		}
	}
	ps, _ := doc["panels"].([]any)
	panels(ps)
	if tm, ok := doc["templating"].(map[string]any); ok {
		list, _ := tm["list"].([]any)
		for _, v := range list {
			vm, _ := v.(map[string]any)
			if vm["type"] != "query" {
				continue
			}
			name, _ := vm["name"].(string)
			q := vm["query"]
			if qm, ok := q.(map[string]any); ok {
				q = qm["query"]
			}
			qs, _ := q.(string)
			if e, ok := variableExpr(qs); ok {
				out = append(out, Expr{Where: "variable " + name, Expr: e})
			}
		}
	}
	return out, nil
}

var (
	labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)
	queryResult = regexp.MustCompile(`^\s*query_result\((.*)\)\s*$`)
)

// variableExpr returns the PromQL inside a Grafana variable query
// (label_values(expr, label), query_result(expr)); label_values(label)
// alone names no metric.
func variableExpr(q string) (string, bool) {
	if m := labelValues.FindStringSubmatch(q); m != nil {
		return m[1], true
	}
	if m := queryResult.FindStringSubmatch(q); m != nil {
		return m[1], true
	}
	return "", false
}

// grafanaVars replaces Grafana's interval macros by a duration and other
// variables outside label values by a number, so the parser sees PromQL.
var (
	intervalMacro = regexp.MustCompile(`\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}`)
)

func selectors(expr, where string) ([]Selector, error) {
	e := intervalMacro.ReplaceAllString(expr, "5m")
	if strings.Contains(stripStrings(e), "$") {
		return nil, fmt.Errorf("a Grafana variable outside a label value in %q", expr)
	}
	node, err := pql.ParseExpr(e)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", expr, err)
	}
	var out []Selector
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		s := Selector{Metric: vs.Name}
		for _, m := range vs.LabelMatchers {
			if m.Name == "__name__" {
				if s.Metric == "" && m.Type.String() == "=" {
					s.Metric = m.Value
				}
				continue
			}
			s.Matchers = append(s.Matchers, Matcher{Name: m.Name, Type: m.Type.String(), Value: m.Value})
		}
		out = append(out, s)
		return nil
	})
	return out, nil
}

// stripStrings removes double-quoted strings (label values) from a
// PromQL text.
func stripStrings(s string) string {
	var b strings.Builder
	in, esc := false, false
	for _, r := range s {
		switch {
		case esc:
			esc = false
		case in && r == '\\':
			esc = true
		case r == '"':
			in = !in
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
