package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	_ "image/png" // decodes the browser's screenshot
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/web"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/worker/singlenode"
)

// checkWebPage serves the coordinator's web page (coordinator/web) for the
// cluster of TestJobTraceInJaeger, whose job j is done and whose trace want
// was read back from the real Jaeger jg: the page's trace endpoint returns
// that trace in tree order with the lock waits marked, and a real headless
// Chromium opening the job's page renders the job, its partitions and
// every span of the trace, the lock waits as their own bars, and takes a
// screenshot of it.
func checkWebPage(t *testing.T, c *cluster, jg *singlenode.Jaeger, j *c2clusterv1.JobStatus, want *singlenode.Trace) {
	page, err := web.New(c.srv, web.Config{JaegerQuery: jg.QueryURL, JaegerUI: jg.QueryURL})
	require.NoError(t, err)
	mux := c.srv.Mux()
	page.Register(mux)
	hs := httptest.NewServer(mux)
	defer hs.Close()

	// The trace endpoint.
	res, err := http.Get(hs.URL + "/ui/api/traces/" + j.TraceId)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	var tr web.Trace
	require.NoError(t, json.Unmarshal(b, &tr))
	require.Equal(t, j.TraceId, tr.TraceID)
	require.Equal(t, jg.QueryURL+"/trace/"+j.TraceId, tr.JaegerURL)
	require.Equal(t, []string{"c2-coordinator", "c2-worker"}, tr.Services)
	byID := map[string]int{}
	for i, s := range tr.Spans {
		byID[s.SpanID] = i
	}
	for _, w := range want.Spans { // every span Jaeger gave the test, as Jaeger has it
		i, ok := byID[w.SpanID]
		require.True(t, ok, "span %s %s on the page's trace", w.SpanID, w.Name)
		s := tr.Spans[i]
		require.Equal(t, w.Name, s.Name)
		require.Equal(t, w.Service, s.Service)
		require.Equal(t, w.Duration.Microseconds(), s.DurationUS)
		require.Equal(t, w.Start.UnixMicro()-tr.StartUnixUS, s.StartUS)
	}
	names := map[string]int{}
	var lockUS int64
	for i, s := range tr.Spans {
		names[s.Name]++
		require.GreaterOrEqual(t, s.StartUS, int64(0))
		require.LessOrEqual(t, s.StartUS+s.DurationUS, tr.DurationUS)
		if s.ParentID == "" {
			require.Zero(t, s.Depth, "a root")
		} else {
			p, ok := byID[s.ParentID]
			require.True(t, ok, "the parent of %s is in the trace", s.Name)
			require.Less(t, p, i, "tree order: %s comes after its parent %s", s.Name, tr.Spans[p].Name)
			require.Equal(t, tr.Spans[p].Depth+1, s.Depth)
		}
		switch s.Name {
		case telemetry.SpanInterlockWait:
			require.Equal(t, web.KindLockWait, s.Kind)
			require.Equal(t, "compute", s.Attr("c2.lock"))
			require.Equal(t, telemetry.SpanPartition, tr.Spans[byID[s.ParentID]].Name)
			lockUS += s.DurationUS
		case telemetry.SpanPartition:
			require.Equal(t, web.KindPartition, s.Kind)
			require.Equal(t, telemetry.SpanPublish, tr.Spans[byID[s.ParentID]].Name, "linked across NATS")
		case telemetry.SpanGPUCompute:
			require.Equal(t, web.KindGPU, s.Kind)
		case telemetry.SpanSynthesize:
			require.Equal(t, web.KindCPU, s.Kind)
		}
	}
	for name, n := range singlenode.ExpectedSpans(2) {
		require.GreaterOrEqual(t, names[name], n, "spans named %q", name)
	}
	require.Equal(t, lockUS, tr.LockWaitUS)
	require.Len(t, tr.Partitions, 2)
	for k, p := range tr.Partitions {
		require.Equal(t, k, p.Partition)
		require.Equal(t, 1, p.Attempts)
		require.True(t, p.OK)
		require.Equal(t, "proc-trace", p.Worker)
	}

	// The job's page in a real browser.
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium on PATH (Debian package chromium; scripts/test.sh installs it): the job page is not checked in a browser")
	}
	url := hs.URL + "/ui/job/" + j.JobId
	dom := string(runChromium(t, bin, "--dump-dom", url))
	bodyTag := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	require.NotEmpty(t, bodyTag, "rendered DOM:\n%s", dom)
	for _, attr := range []string{`data-loaded="true"`, `data-job-state="done"`, `data-trace="loaded"`,
		`data-trace-spans="` + strconv.Itoa(len(tr.Spans)) + `"`} {
		require.Contains(t, bodyTag, attr, "the page finished loading the done job and its trace")
	}
	require.Contains(t, dom, `<code id="job-id">`+j.JobId+`</code>`)
	require.Contains(t, dom, `<span id="job-state" class="badge done">done</span>`)
	require.Contains(t, dom, `2 / 2 partitions proved`)
	for k := range 2 {
		require.Regexp(t, `data-partition="`+strconv.Itoa(k)+`" data-state="done"`, dom)
	}
	link := regexp.MustCompile(`<a id="trace-jaeger"[^>]*>`).FindString(dom)
	require.Contains(t, link, ` href="`+tr.JaegerURL+`"`, "the link to the trace in Jaeger's UI")
	require.NotContains(t, link, "hidden")
	require.Contains(t, dom, `data-kind="lock-wait"><span class="swatch k-lock-wait"></span>lock wait (interlock.wait)</span>`, "the legend names the lock-wait colour")

	row := regexp.MustCompile(`<div class="wf-row([^"]*)" data-span-id="([0-9a-f]+)" data-span-name="([^"]*)" data-kind="([^"]*)"`)
	rows := row.FindAllStringSubmatch(dom, -1)
	require.Len(t, rows, len(tr.Spans), "one waterfall row per span")
	lockRows := 0
	for i, r := range rows {
		s := tr.Spans[i]
		require.Equal(t, s.SpanID, r[2], "row %d in the trace's tree order", i)
		require.Equal(t, s.Name, r[3])
		require.Equal(t, s.Kind, r[4])
		isLock := strings.Contains(r[1], " lock")
		require.Equal(t, s.Name == telemetry.SpanInterlockWait, isLock, "row %d (%s): marked as a lock wait exactly when it is one", i, s.Name)
		if isLock {
			lockRows++
		}
	}
	require.Equal(t, names[telemetry.SpanInterlockWait], lockRows)
	require.Equal(t, lockRows, strings.Count(dom, `class="wf-bar k-lock-wait"`), "each lock wait has its own lock-wait bar")
	require.Equal(t, lockRows, strings.Count(dom, `<span class="tag lock">lock wait</span>`))
	require.Equal(t, names[telemetry.SpanGPUCompute], strings.Count(dom, `data-span-name="gpu.compute" data-kind="gpu"`))

	// A screenshot of it: written, a real image of the window's size, in
	// the page's colours (lock-wait orange and GPU purple among them).
	// $C2_E2E_SCREENSHOT names a file to keep it in.
	png := filepath.Join(t.TempDir(), "job.png")
	if keep := os.Getenv("C2_E2E_SCREENSHOT"); keep != "" { // to look at it
		png = keep
	}
	runChromium(t, bin, "--hide-scrollbars", "--window-size=1400,2000", "--screenshot="+png, url)
	f, err := os.ReadFile(png)
	require.NoError(t, err, "the screenshot was written")
	img, _, err := image.Decode(bytes.NewReader(f))
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, 1400, 2000), img.Bounds())
	colours := map[[3]uint32]int{}
	for y := 0; y < 2000; y++ {
		for x := 0; x < 1400; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	require.Greater(t, len(colours), 100, "a rendered page, not a blank image")
	require.Positive(t, colours[[3]uint32{0xf7, 0x67, 0x07}], "lock-wait orange (--k-lock-wait) on the screenshot")
	require.Positive(t, colours[[3]uint32{0x70, 0x48, 0xe8}], "GPU purple (--k-gpu) on the screenshot")
	t.Logf("job page: %d spans rendered, %d lock waits; screenshot %d bytes, %d colours", len(rows), lockRows, len(f), len(colours))
}

// chromium returns the path of a Chromium or Chrome on PATH, "" when none.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// runChromium runs the headless browser on a page once (a fresh profile,
// nothing fetched but the page) and returns its standard output. The
// virtual-time budget lets the page's fetches and timers run to the end:
// virtual time stands still while a request is in flight, and the page
// stops refreshing once the done job's trace is complete.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=30000"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	require.NoError(t, err, "%s %v:\n%s", bin, args, stderr.String())
	t.Logf("chromium %s: %.1fs", args[len(args)-2], time.Since(start).Seconds())
	return stdout.Bytes()
}
