package cuzk

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/common/expfmt"

	"github.com/c2cluster/c2cluster/pkg/porep"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	cuzkv1 "github.com/c2cluster/c2cluster/proto/cuzk/v1"
)

// GetStatus implements cuzk.v1.ProvingEngine from the coordinator's cluster
// status (registered workers, queue depth) and metrics.
func (e *Engine) GetStatus(ctx context.Context, _ *connect.Request[cuzkv1.GetStatusRequest]) (*connect.Response[cuzkv1.GetStatusResponse], error) {
	st, err := e.co.Status(ctx, connect.NewRequest(&c2clusterv1.StatusRequest{}))
	if err != nil {
		return nil, wrap("GetStatus", err)
	}
	res := &cuzkv1.GetStatusResponse{UptimeSeconds: uint64(time.Since(e.start) / time.Second)}
	workers := slices.Clone(st.Msg.Workers)
	slices.SortFunc(workers, func(a, b *c2clusterv1.WorkerInfo) int { return strings.Compare(a.Id, b.Id) })
	srs := map[string]cuzkv1.SRSStatus_Tier{}
	for _, w := range workers {
		// Workers report their in-flight partitions, not which device
		// proves which: every device of a worker shows the worker's jobs.
		jobs := jobsOf(w.Current)
		kind := ""
		if jobs != "" {
			kind = proofKindPoRep
		}
		for _, d := range w.Devices {
			res.Gpus = append(res.Gpus, &cuzkv1.GPUStatus{Ordinal: uint32(len(res.Gpus)), Name: w.Id + "/" + d,
				CurrentJobId: jobs, CurrentProofKind: kind})
		}
		for _, r := range w.Resident {
			id, tier := CircuitID(r.Shape), tierOf(r.Residency)
			if old, ok := srs[id]; !ok || tier < old {
				srs[id] = tier
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(srs)) {
		res.LoadedSrs = append(res.LoadedSrs, &cuzkv1.SRSStatus{CircuitId: id, Tier: srs[id]})
	}
	res.Queues = []*cuzkv1.QueueStatus{queueOf(st.Msg.Queue)}
	res.TotalProofsCompleted, res.TotalProofsFailed = e.totals()
	return connect.NewResponse(res), nil
}

// jobsOf lists the distinct jobs of in-flight partitions ("<job>.<n>"),
// comma-separated, in order.
func jobsOf(current []string) string {
	var jobs []string
	for _, c := range current {
		job := c
		if i := strings.LastIndexByte(c, '.'); i > 0 {
			job = c[:i]
		}
		if !slices.Contains(jobs, job) {
			jobs = append(jobs, job)
		}
	}
	return strings.Join(jobs, ",")
}

// tierOf maps a worker's parameter residency onto the cuzk tiers: on the
// device or page-locked for it is HOT, in host memory WARM.
func tierOf(residency string) cuzkv1.SRSStatus_Tier {
	switch residency {
	case "device", "pinned":
		return cuzkv1.SRSStatus_HOT
	case "host":
		return cuzkv1.SRSStatus_WARM
	}
	return cuzkv1.SRSStatus_COLD
}

// queueOf converts the queue depth (partition tasks by shape and lane) into
// proofs: per shape, tasks divided by the shape's partitions per proof,
// rounded up.
func queueOf(depth []*c2clusterv1.LaneDepth) *cuzkv1.QueueStatus {
	type counts struct{ pending, inFlight uint64 }
	byShape := map[string]*counts{}
	for _, d := range depth {
		c := byShape[d.Shape]
		if c == nil {
			c = &counts{}
			byShape[d.Shape] = c
		}
		c.pending += d.Pending
		c.inFlight += d.InFlight
	}
	q := &cuzkv1.QueueStatus{ProofKind: proofKindPoRep}
	var pending, inFlight uint64
	for shape, c := range byShape {
		parts := uint64(1)
		if s, err := porep.ShapeByName(shape); err == nil {
			parts = uint64(s.Partitions)
		}
		pending += (c.pending + parts - 1) / parts
		inFlight += (c.inFlight + parts - 1) / parts
	}
	q.Pending, q.InProgress = uint32(min(pending, math.MaxUint32)), uint32(min(inFlight, math.MaxUint32))
	return q
}

// totals are the proofs the coordinator completed and failed since it
// started, from its metrics: c2_proofs_total{kind="job"} and
// c2_failures_total{kind="job"} without cancellations.
func (e *Engine) totals() (completed, failed uint64) {
	mfs, err := e.cfg.Metrics.Registry.Gather()
	if err != nil {
		e.log.Warn("cuzk: reading the metrics for GetStatus", slog.Any("err", err))
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if name != "c2_proofs_total" && name != "c2_failures_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] != "job" {
				continue
			}
			v := uint64(m.GetCounter().GetValue())
			switch {
			case name == "c2_proofs_total":
				completed += v
			case labels["reason"] != "cancelled":
				failed += v
			}
		}
	}
	return completed, failed
}

// GetMetrics implements cuzk.v1.ProvingEngine: the coordinator's metrics in
// the Prometheus text exposition format.
func (e *Engine) GetMetrics(context.Context, *connect.Request[cuzkv1.GetMetricsRequest]) (*connect.Response[cuzkv1.GetMetricsResponse], error) {
	mfs, err := e.cfg.Metrics.Registry.Gather()
	if err != nil && len(mfs) == 0 {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("GetMetrics: %w", err))
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("GetMetrics: encoding %s: %w", mf.GetName(), err))
		}
	}
	return connect.NewResponse(&cuzkv1.GetMetricsResponse{PrometheusText: buf.String()}), nil
}

// CircuitID is the cuzk circuit id of a PoRep shape: "porep-32g" for
// 32GiB (the official shapes: porep-2k, -8m, -512m, -32g, -64g), and
// "porep-<name>" for a test shape ("porep-test-micro").
func CircuitID(shape string) string {
	s, err := porep.ShapeByName(shape)
	if err != nil || s.Test {
		return "porep-" + shape
	}
	return "porep-" + strings.ToLower(strings.TrimSuffix(shape, "iB"))
}

// shapeOfCircuit returns the shape a PoRep circuit id names.
func shapeOfCircuit(op, id string) (string, error) {
	var known []string
	for _, s := range porep.Shapes() {
		c := CircuitID(s.Name)
		if c == id {
			return s.Name, nil
		}
		known = append(known, c)
	}
	for _, prefix := range []string{"wpost-", "winning-", "snap-"} {
		if strings.HasPrefix(id, prefix) {
			return "", connect.NewError(connect.CodeUnimplemented, fmt.Errorf(
				"%s: circuit_id %q is not a PoRep circuit: the c2cluster coordinator proves PoRep C2 only", op, id))
		}
	}
	return "", connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s: unknown circuit_id %q (PoRep circuits: %s)", op, id, strings.Join(known, ", ")))
}

// resident reports whether a registered worker holds the parameters of
// shape.
func (e *Engine) resident(ctx context.Context, op, shape string) (bool, error) {
	st, err := e.co.Status(ctx, connect.NewRequest(&c2clusterv1.StatusRequest{}))
	if err != nil {
		return false, wrap(op, err)
	}
	for _, w := range st.Msg.Workers {
		for _, r := range w.Resident {
			if r.Shape == shape {
				return true, nil
			}
		}
	}
	return false, nil
}

// NoteHeader is the response header in which PreloadSRS and EvictSRS say
// what they did (the messages have no field for it).
const NoteHeader = "C2-Note"

// PreloadSRS implements cuzk.v1.ProvingEngine. Workers load the parameters
// of their shapes at start and keep them resident per device; nothing is
// loaded on request. already_loaded tells whether a registered worker holds
// the circuit's parameters.
func (e *Engine) PreloadSRS(ctx context.Context, req *connect.Request[cuzkv1.PreloadSrsRequest]) (*connect.Response[cuzkv1.PreloadSrsResponse], error) {
	shape, err := shapeOfCircuit("PreloadSRS", req.Msg.CircuitId)
	if err != nil {
		return nil, err
	}
	loaded, err := e.resident(ctx, "PreloadSRS", shape)
	if err != nil {
		return nil, err
	}
	res := connect.NewResponse(&cuzkv1.PreloadSrsResponse{AlreadyLoaded: loaded})
	if loaded {
		res.Header().Set(NoteHeader, fmt.Sprintf("%s (%s) is resident on a registered worker", req.Msg.CircuitId, shape))
	} else {
		res.Header().Set(NoteHeader, fmt.Sprintf("no registered worker proves %s (%s): start a worker with that shape; workers load parameters at start", req.Msg.CircuitId, shape))
	}
	return res, nil
}

// EvictSRS implements cuzk.v1.ProvingEngine as a no-op: parameters stay
// resident on the workers' devices until the workers stop.
func (e *Engine) EvictSRS(_ context.Context, req *connect.Request[cuzkv1.EvictSrsRequest]) (*connect.Response[cuzkv1.EvictSrsResponse], error) {
	shape, err := shapeOfCircuit("EvictSRS", req.Msg.CircuitId)
	if err != nil {
		return nil, err
	}
	e.log.Info("cuzk: EvictSRS is a no-op on a cluster", slog.String("circuit_id", req.Msg.CircuitId))
	res := connect.NewResponse(&cuzkv1.EvictSrsResponse{})
	res.Header().Set(NoteHeader, fmt.Sprintf("no-op: workers keep the parameters of %s (%s) resident per device until they stop", req.Msg.CircuitId, shape))
	return res, nil
}
