// Package web is the coordinator's own web page, served under /ui/ on the
// coordinator's HTTP listener (coordinator serve and the single node of
// coordinator run): recent jobs with their state and partition progress,
// the registered workers with their devices and in-flight partitions, the
// queue depth per shape and lane, and for one job its summary, its
// partitions and its trace as a waterfall.
//
// The page is static HTML, CSS and plain JavaScript embedded in the binary
// (assets/), with no build step. It reads the page's own JSON endpoints:
//
//	GET /ui/api/cluster           workers, queue depth, whether traces are available
//	GET /ui/api/jobs[?state=S&limit=N]  recent jobs, newest first
//	GET /ui/api/jobs/{id}         one job and its partitions in flight
//	GET /ui/api/traces/{traceID}  a trace from Jaeger, spans in tree order
//
// The endpoints read through the coordinator's public API methods (Status
// and ListJobs of *server.Server, or a ProofService client: see API), never
// Redis or NATS. Traces come from Jaeger's HTTP query API
// (GET {query}/api/traces/{id}, which Jaeger v2 serves with or without its
// own UI) when Config.JaegerQuery names it; without it the page works and
// says that traces are unavailable. Config.JaegerUI, when set, adds links
// to the trace in Jaeger's UI.
//
// Bad input is a 4xx with a message: an unknown job 404, a malformed job
// or trace id 400. The JavaScript puts text into the page only through
// textContent and attributes, and the HTML shell is rendered with
// html/template, so nothing a job, worker or span carries becomes markup.
package web
