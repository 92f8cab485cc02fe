package telemetry

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Stage label values of StageSeconds. Lock wait has its own histogram
// (LockWaitSeconds) and is never part of a device stage.
const (
	StageQueueWait  = "queue_wait"
	StageFetchInput = "fetch_input"
	StageSynthesize = "synthesize"
	StageUpload     = "gpu_upload"
	StageCompute    = "gpu_compute"
	StageProve      = "prove"
	StageEpilogue   = "epilogue"
	StageVerify     = "verify"
	StageAssemble   = "assemble"
	StageJobTotal   = "job_total"
)

// Metrics are the Prometheus collectors of a c2cluster process. Label
// values must have bounded cardinality: failure reasons are short codes
// ("bad_input", "max_deliver", "verify"), never error texts.
type Metrics struct {
	Registry *prometheus.Registry

	// QueueDepth is the number of partition tasks waiting, by shape and
	// lane; set it with SetQueueDepth, which keeps a series at 0 for every
	// shape and lane rather than dropping it.
	QueueDepth *prometheus.GaugeVec
	// PartitionsInFlight is the number of partitions being proved by this
	// process (worker) or handed out and not yet complete (coordinator).
	PartitionsInFlight prometheus.Gauge
	// StageSeconds is the latency of each stage (label stage: Stage*).
	StageSeconds *prometheus.HistogramVec
	// LockWaitSeconds is the time a slot waited for a device lock, by
	// device and lock ("compute", "upload", "exclusive").
	LockWaitSeconds *prometheus.HistogramVec
	// ProofsTotal counts proofs produced, by kind ("partition", "job") and
	// shape.
	ProofsTotal *prometheus.CounterVec
	// FailuresTotal counts failures by kind ("partition", "job", "submit")
	// and reason code.
	FailuresTotal *prometheus.CounterVec
	// SubmitsTotal counts submissions by result ("accepted",
	// "deduplicated", "rejected").
	SubmitsTotal *prometheus.CounterVec
	// DeviceBusySeconds is the time each device spent in each of its
	// proving stages (label stage: StageUpload, StageCompute, …; lock waits
	// never count): rate(…[1m]) is the device's busy fraction in that
	// stage — gpu_compute near 1 means the GPU is the bound, well below 1
	// with slots busy synthesizing means the CPU is.
	DeviceBusySeconds *prometheus.CounterVec
	// SRSResidentBytes is the size of loaded parameters, by shape and
	// residency ("host", "pinned", "device").
	SRSResidentBytes *prometheus.GaugeVec
	// VRAMBytes is device memory by device and kind ("used", "reserved",
	// "budget").
	VRAMBytes *prometheus.GaugeVec
	// DependencyUp is 1 while the process reaches a dependency ("redis",
	// "nats") and 0 while it does not (set through Dependencies).
	DependencyUp *prometheus.GaugeVec
	// RepairsTotal counts what the coordinator's watchdog repaired, by
	// kind ("republished", "reproved", "assembly").
	RepairsTotal *prometheus.CounterVec
	// WorkersQuarantined is the number of workers quarantined (they take no
	// work until an operator releases them).
	WorkersQuarantined prometheus.Gauge
	// BadPartitionProofs counts partition proofs that failed the
	// coordinator's verification at assembly, by shape.
	BadPartitionProofs *prometheus.CounterVec
	// PartitionsRequeued counts partitions re-queued because their proof
	// failed verification, by shape.
	PartitionsRequeued *prometheus.CounterVec

	queueMu     sync.Mutex
	queueSeries map[QueueKey]struct{} // every c2_queue_depth series made so far
}

// QueueKey names one c2_queue_depth series: a shape and a lane.
type QueueKey struct{ Shape, Lane string }

// SetQueueDepth publishes the partition tasks waiting per shape and lane
// (QueueDepth). Every shape × lane of shapes and lanes has a series, 0 when
// nothing waits there, and so has every key of pending; a series published
// once stays and falls back to 0 when its tasks are gone. An empty queue
// therefore reads 0, never "no data", in queries and alerts.
func (m *Metrics) SetQueueDepth(shapes, lanes []string, pending map[QueueKey]uint64) {
	m.queueMu.Lock()
	defer m.queueMu.Unlock()
	if m.queueSeries == nil {
		m.queueSeries = map[QueueKey]struct{}{}
	}
	for _, s := range shapes {
		for _, l := range lanes {
			m.queueSeries[QueueKey{Shape: s, Lane: l}] = struct{}{}
		}
	}
	for k := range pending {
		m.queueSeries[k] = struct{}{}
	}
	for k := range m.queueSeries {
		m.QueueDepth.WithLabelValues(k.Shape, k.Lane).Set(float64(pending[k]))
	}
}

// latencyBuckets span 1 ms to ~17 min: partition stages of test shapes take
// milliseconds, 32 GiB synthesis takes tens of seconds.
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2, 20)

// NewMetrics creates the collectors on a fresh registry that also carries
// the Go runtime and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		Registry: reg,
		QueueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "c2", Name: "queue_depth", Help: "Partition tasks waiting in the queue, by shape and lane.",
		}, []string{"shape", "lane"}),
		PartitionsInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "c2", Name: "partitions_in_flight", Help: "Partitions being proved.",
		}),
		StageSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "c2", Name: "stage_seconds", Help: "Latency of each proving stage (lock wait excluded).",
			Buckets: latencyBuckets,
		}, []string{"stage"}),
		LockWaitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "c2", Name: "lock_wait_seconds", Help: "Time waiting for a device lock, by device and lock.",
			Buckets: latencyBuckets,
		}, []string{"device", "lock"}),
		DeviceBusySeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "device_busy_seconds_total", Help: "Seconds each device spent in each proving stage (lock waits excluded), by device and stage.",
		}, []string{"device", "stage"}),
		ProofsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "proofs_total", Help: "Proofs produced, by kind (partition, job) and shape.",
		}, []string{"kind", "shape"}),
		FailuresTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "failures_total", Help: "Failures by kind (partition, job, submit) and reason code.",
		}, []string{"kind", "reason"}),
		SubmitsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "submits_total", Help: "Submissions by result (accepted, deduplicated, rejected).",
		}, []string{"result"}),
		SRSResidentBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "c2", Name: "srs_resident_bytes", Help: "Loaded parameter bytes by shape and residency.",
		}, []string{"shape", "residency"}),
		VRAMBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "c2", Name: "vram_bytes", Help: "Device memory by device and kind (used, reserved, budget).",
		}, []string{"device", "kind"}),
		DependencyUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "c2", Name: "dependency_up", Help: "1 while this process reaches the dependency (redis, nats), 0 while it does not.",
		}, []string{"dependency"}),
		RepairsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "watchdog_repairs_total", Help: "Partitions and jobs the coordinator's watchdog repaired, by kind (republished, reproved; assembly: a job's assembly asked for again).",
		}, []string{"kind"}),
		WorkersQuarantined: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "c2", Name: "workers_quarantined", Help: "Workers quarantined: they take no work until an operator releases them.",
		}),
		BadPartitionProofs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "bad_partition_proofs_total", Help: "Partition proofs that failed the coordinator's verification at assembly, by shape.",
		}, []string{"shape"}),
		PartitionsRequeued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "partitions_requeued_total", Help: "Partitions re-queued because their proof failed verification, by shape.",
		}, []string{"shape"}),
	}
	reg.MustRegister(m.QueueDepth, m.PartitionsInFlight, m.StageSeconds, m.LockWaitSeconds, m.DeviceBusySeconds,
		m.ProofsTotal, m.FailuresTotal, m.SubmitsTotal, m.SRSResidentBytes, m.VRAMBytes, m.DependencyUp, m.RepairsTotal,
		m.WorkersQuarantined, m.BadPartitionProofs, m.PartitionsRequeued)
	return m
}

// Handler serves the registry in the Prometheus exposition format (mount it
// at /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
