package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The monitoring files these tests hold to the code.
const (
	rulesFile     = "deploy/prometheus/rules.yml"
	rulesTestFile = "deploy/prometheus/rules_test.yml"
	promConfig    = "deploy/prometheus/prometheus.yml"
	dashboardFile = "deploy/grafana/dashboards/c2cluster.json"
)

// targetLabels are the labels Prometheus adds to every scraped series: job
// and instance always, service in deploy/prometheus/prometheus.yml, pod,
// node and backend in deploy/k8s/config/prometheus.yml.
var targetLabels = []string{"job", "instance", "service", "pod", "node", "backend"}

// scrapeJobs are the job names the rules and the dashboard select on.
var scrapeJobs = []string{"coordinator", "worker"}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, rulesFile))
	require.NoError(t, err)
	return root
}

// family is what /metrics exposes under one series name.
type family struct {
	labels  []string
	buckets []string // le values of a histogram's _bucket series
}

var descRE = regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*variableLabels: \{([^}]*)\}\}$`)

// exposedSeries returns every series name /metrics can carry, with its
// labels: the registry of NewMetrics — what the coordinator (server.Config's
// default, coordinator serve) and the worker (worker/cli.Run) both create —
// with one series made in each of its vectors, gathered as a scrape would.
func exposedSeries(t *testing.T) map[string]family {
	t.Helper()
	m := NewMetrics()
	v := reflect.ValueOf(m).Elem()
	vecs := 0
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanInterface() || f.Type() == reflect.TypeFor[*prometheus.Registry]() {
			continue
		}
		c, ok := f.Interface().(prometheus.Collector)
		if !ok {
			continue
		}
		// A collector of the struct must be one the registry serves.
		var are prometheus.AlreadyRegisteredError
		require.True(t, errors.As(m.Registry.Register(c), &are), "Metrics.%s is not registered", v.Type().Field(i).Name)
		cv := f
		for cv.Kind() == reflect.Interface || cv.Kind() == reflect.Pointer {
			cv = cv.Elem()
		}
		mv := cv.FieldByName("MetricVec")
		if !mv.IsValid() {
			continue // a plain gauge or counter: exposed as it is
		}
		ch := make(chan *prometheus.Desc, 1)
		c.Describe(ch)
		d := descRE.FindStringSubmatch((<-ch).String())
		require.NotNil(t, d, "cannot read the labels of Metrics.%s", v.Type().Field(i).Name)
		labels := prometheus.Labels{}
		for _, l := range strings.Split(d[2], ",") {
			labels[l] = "x"
		}
		_, err := mv.Interface().(*prometheus.MetricVec).GetMetricWith(labels)
		require.NoError(t, err, "Metrics.%s (%s)", v.Type().Field(i).Name, d[1])
		vecs++
	}
	require.GreaterOrEqual(t, vecs, 8, "the vectors of Metrics were not found")

	mfs, err := m.Registry.Gather()
	require.NoError(t, err)
	out := map[string]family{}
	for _, mf := range mfs {
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		name := mf.GetName()
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			var les []string
			for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
				les = append(les, strconv.FormatFloat(b.GetUpperBound(), 'f', -1, 64))
			}
			out[name+"_bucket"] = family{labels: append(slices.Clone(labels), "le"), buckets: append(les, "+Inf")}
			out[name+"_sum"] = family{labels: labels}
			out[name+"_count"] = family{labels: labels}
		case dto.MetricType_SUMMARY:
			out[name] = family{labels: append(slices.Clone(labels), "quantile")}
			out[name+"_sum"] = family{labels: labels}
			out[name+"_count"] = family{labels: labels}
		default:
			out[name] = family{labels: labels}
		}
	}
	// Series Prometheus makes itself: a target's health and the alerts.
	out["up"] = family{}
	out["ALERTS"] = family{labels: []string{"alertname", "alertstate", "severity", "shape", "kind", "reason", "device"}}
	return out
}

// selector mirrors tools/promql's output.
type selector struct {
	Metric   string `json:"metric"`
	Matchers []struct {
		Name, Type, Value string
	} `json:"matchers"`
}

type promExpr struct {
	File      string     `json:"file"`
	Where     string     `json:"where"`
	Expr      string     `json:"expr"`
	Selectors []selector `json:"selectors"`
}

// parseExprs runs tools/promql (Prometheus's PromQL parser, a module of its
// own so the main module does not depend on Prometheus) on files.
func parseExprs(t *testing.T, root string, files ...string) []promExpr {
	t.Helper()
	tool := filepath.Join(root, "tools", "promql")
	if out, err := exec.Command("go", "-C", tool, "mod", "download").CombinedOutput(); err != nil {
		t.Skipf("cannot fetch tools/promql's modules (no module proxy?), so the PromQL of the monitoring files is not checked here: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "promql")
	out, err := exec.Command("go", "-C", tool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "building tools/promql: %s", out)
	var args []string
	for _, f := range files {
		args = append(args, filepath.Join(root, f))
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "tools/promql: %s", stderr.String())
	var exprs []promExpr
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &exprs))
	return exprs
}

// alternatives returns the values a matcher's value stands for: itself, or
// the branches of a plain regular-expression alternation; nil when the value
// is a pattern or a Grafana variable (not checked).
func alternatives(typ, value string) []string {
	if strings.Contains(value, "$") {
		return nil
	}
	if typ == "=" || typ == "!=" {
		return []string{value}
	}
	if regexp.MustCompile(`^[A-Za-z0-9_.+]+(\|[A-Za-z0-9_.+]+)*$`).MatchString(value) && !strings.Contains(value, ".*") {
		return strings.Split(value, "|")
	}
	return nil
}

// TestMonitoringNamesExist: every metric, label, stage, bucket bound and
// scrape job named by the alert rules, their promtool tests and the Grafana
// dashboard is one the binaries expose — a renamed metric fails here.
func TestMonitoringNamesExist(t *testing.T) {
	root := repoRoot(t)
	series := exposedSeries(t)
	for _, want := range []string{"c2_queue_depth", "c2_stage_seconds_bucket", "c2_lock_wait_seconds_count",
		"c2_device_busy_seconds_total", "c2_vram_bytes", "go_goroutines", "process_resident_memory_bytes"} {
		_, ok := series[want]
		require.True(t, ok, "%s is not in the registry's exposition", want)
	}
	stages := []string{StageQueueWait, StageFetchInput, StageSynthesize, StageUpload, StageCompute, StageProve,
		StageEpilogue, StageVerify, StageAssemble, StageJobTotal}

	exprs := parseExprs(t, root, rulesFile, rulesTestFile, dashboardFile)
	perFile := map[string]int{}
	for _, e := range exprs {
		rel, _ := filepath.Rel(root, e.File)
		perFile[rel]++
		where := rel + ": " + e.Where + ": " + e.Expr
		for _, s := range e.Selectors {
			require.NotEmpty(t, s.Metric, "%s: a selector without a metric name", where)
			fam, ok := series[s.Metric]
			require.True(t, ok, "%s: metric %q is not exposed by the coordinator or the worker", where, s.Metric)
			for _, m := range s.Matchers {
				require.True(t, slices.Contains(fam.labels, m.Name) || slices.Contains(targetLabels, m.Name),
					"%s: %s has no label %q (its labels: %v, target labels %v)", where, s.Metric, m.Name, fam.labels, targetLabels)
				for _, val := range alternatives(m.Type, m.Value) {
					switch m.Name {
					case "stage":
						require.Contains(t, stages, val, "%s: stage %q is none of telemetry's Stage* values", where, val)
					case "le":
						require.Contains(t, fam.buckets, val, "%s: %s has no bucket le=%q", where, s.Metric, val)
					case "job":
						if s.Metric != "ALERTS" {
							require.Contains(t, scrapeJobs, val, "%s: no scrape job %q", where, val)
						}
					}
				}
			}
		}
	}
	for _, f := range []string{rulesFile, rulesTestFile, dashboardFile} {
		require.Positive(t, perFile[f], "no expression read from %s", f)
	}

	// The Compose Prometheus scrapes the jobs the expressions select on and
	// loads the rules.
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName string `yaml:"job_name"`
		} `yaml:"scrape_configs"`
	}
	data, err := os.ReadFile(filepath.Join(root, promConfig))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &cfg))
	var jobs []string
	for _, sc := range cfg.ScrapeConfigs {
		jobs = append(jobs, sc.JobName)
	}
	for _, j := range scrapeJobs {
		require.Contains(t, jobs, j, "%s does not scrape job %q", promConfig, j)
	}
	require.Equal(t, []string{"rules.yml"}, cfg.RuleFiles)
}

// TestAlertRulesComplete: every alert has a severity, a summary and a
// description, and rules_test.yml makes each one fire and stay quiet at
// least once.
func TestAlertRulesComplete(t *testing.T) {
	root := repoRoot(t)
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	data, err := os.ReadFile(filepath.Join(root, rulesFile))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &rules))
	var tests struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	data, err = os.ReadFile(filepath.Join(root, rulesTestFile))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &tests))
	require.Equal(t, []string{"rules.yml"}, tests.RuleFiles)
	fires, quiet := map[string]int{}, map[string]int{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname]++
			} else {
				quiet[a.Alertname]++
			}
		}
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			require.Contains(t, []string{"critical", "warning", "info"}, r.Labels["severity"], "%s: severity", r.Alert)
			require.NotEmpty(t, r.Annotations["summary"], "%s: summary", r.Alert)
			require.Greater(t, len(r.Annotations["description"]), 80, "%s: a description that says what to do", r.Alert)
			require.Positive(t, fires[r.Alert], "%s: no test in %s makes it fire", r.Alert, rulesTestFile)
			require.Positive(t, quiet[r.Alert], "%s: no test in %s where it stays quiet", r.Alert, rulesTestFile)
			delete(fires, r.Alert)
			delete(quiet, r.Alert)
		}
	}
	require.GreaterOrEqual(t, n, 10)
	require.Empty(t, fires, "tests of alerts that rules.yml lacks")
	require.Empty(t, quiet, "tests of alerts that rules.yml lacks")
}

// TestDashboardWellFormed: the provisioned dashboard has unique panel ids,
// panels inside Grafana's 24 columns, and every query on the dashboard's
// datasource variable.
func TestDashboardWellFormed(t *testing.T) {
	root := repoRoot(t)
	type panel struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ H, W, X, Y int } `json:"gridPos"`
		Targets []struct {
			Expr       string `json:"expr"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
		} `json:"targets"`
	}
	var dash struct {
		UID        string  `json:"uid"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
	}
	data, err := os.ReadFile(filepath.Join(root, dashboardFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &dash))
	require.Equal(t, "c2cluster", dash.UID)
	var vars []string
	for _, v := range dash.Templating.List {
		vars = append(vars, v.Name)
	}
	require.Contains(t, vars, "datasource")
	ids := map[int]string{}
	queries := 0
	for _, p := range dash.Panels {
		require.NotContains(t, ids, p.ID, "panel %q reuses id %d", p.Title, p.ID)
		ids[p.ID] = p.Title
		require.True(t, p.GridPos.X >= 0 && p.GridPos.W > 0 && p.GridPos.X+p.GridPos.W <= 24, "panel %q: gridPos %+v", p.Title, p.GridPos)
		if p.Type == "row" {
			continue
		}
		require.NotNil(t, p.Datasource, "panel %q has no datasource", p.Title)
		require.Equal(t, "${datasource}", p.Datasource.UID, "panel %q", p.Title)
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			require.Equal(t, "${datasource}", tg.Datasource.UID, "panel %q", p.Title)
			require.NotEmpty(t, tg.Expr, "panel %q", p.Title)
			queries++
		}
	}
	require.GreaterOrEqual(t, queries, 20)
}
