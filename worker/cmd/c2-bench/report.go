package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one invocation measured (the -json file).
type Report struct {
	Tool      string    `json:"tool"`
	Started   time.Time `json:"started"`
	Args      []string  `json:"args"`
	Host      Host      `json:"host"`
	Shape     string    `json:"shape"`
	Input     Input     `json:"input"`
	Circuit   Circuit   `json:"circuit"`
	Params    Params    `json:"params"`
	Backend   Backend   `json:"backend"`
	Runs      []*Run    `json:"runs"`
	Notes     []string  `json:"notes"`
	Verified  bool      `json:"all_verified"`
	Proofs    int       `json:"proofs"`
	Failures  int       `json:"failures"`
	TotalWall float64   `json:"total_wall_s"`
	// Interrupted names the run that did not finish (a deadline, a
	// signal, an error) and why; Runs holds those before it, complete.
	Interrupted string `json:"interrupted,omitempty"`
}

// Host describes the machine and the process settings.
type Host struct {
	Hostname    string `json:"hostname"`
	CPUs        int    `json:"cpus"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	MemTotal    int64  `json:"mem_total_bytes"`
	MemoryLimit int64  `json:"go_memory_limit_bytes"`
	GoVersion   string `json:"go_version"`
	Revision    string `json:"vcs_revision,omitempty"`
}

// Input is the C1 output the partitions come from.
type Input struct {
	// Kind is "sparse" (sealer.WriteSparseC1: a BENCHMARK INPUT, not a
	// sealed sector) or "file" (-c1).
	Kind      string  `json:"kind"`
	Label     string  `json:"label"`
	Path      string  `json:"path,omitempty"`
	Seed      uint64  `json:"seed,omitempty"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	CommR     string  `json:"comm_r"`
	Partition int     `json:"partitions_in_c1"`
}

// Circuit is the compiled partition circuit.
type Circuit struct {
	Constraints int     `json:"constraints"`
	Inputs      int     `json:"inputs"`
	Aux         int     `json:"aux"`
	Domain      int     `json:"domain"`
	ADensity    float64 `json:"a_density_aux"`
	BDensity    float64 `json:"b_density_aux"`
	// CompileSeconds is this run's wall time for circuit.ForShape (0 when
	// the process had compiled it already); CompiledIn the compiler's own.
	CompileSeconds float64 `json:"compile_s"`
	CompiledIn     float64 `json:"compiled_in_s"`
	Peaks          Peaks   `json:"peaks"`
	// HeapAfter is the live Go heap after compiling (after a GC): what the
	// compiled circuit keeps, plus the C1 output.
	HeapAfter int64 `json:"heap_after_bytes"`
}

// Params says where the Groth16 parameters came from.
type Params struct {
	// Source is "read" (-params-dir) or "generated" (in memory).
	Source     string `json:"source"`
	Dir        string `json:"dir,omitempty"`
	Why        string `json:"why"`
	ToxicWaste string `json:"toxic_waste,omitempty"`
	FixedBase  string `json:"fixed_base,omitempty"`
	// HForm is the H query's form (groth16.HForm) the partitions are
	// proved with: coset-lagrange or monomial (with -h-form converted,
	// coset-lagrange: the generated monomial key converted).
	HForm string `json:"h_form"`
	// ConvertSeconds is Convert.Seconds (-h-form converted; 0 otherwise).
	ConvertSeconds float64 `json:"convert_seconds,omitempty"`
	// Convert is the conversion of the generated monomial key (-h-form
	// converted); nil otherwise.
	Convert *Conversion `json:"convert,omitempty"`
	// SubgroupCheck says where parameters read from -params-dir were
	// subgroup-checked (empty with -trusted-params or when generated).
	SubgroupCheck string  `json:"subgroup_check,omitempty"`
	Seconds       float64 `json:"seconds"`
	Written       bool    `json:"written"`
	WriteSecs     float64 `json:"write_s,omitempty"`
	Bytes         int64   `json:"bytes"`
	Peaks         Peaks   `json:"peaks"`
	HeapAfter     int64   `json:"heap_after_bytes"`
}

// Conversion is -h-form converted: the generated monomial key converted
// to coset-Lagrange form (groth16.ConvertHCosetLagrange).
type Conversion struct {
	// DFT says where the two group DFTs ran (cuda.SelectDFT).
	DFT string `json:"dft"`
	// Seconds is the whole conversion; Seconds of Setup is Params.Seconds.
	Seconds float64 `json:"seconds"`
	// DFTSeconds is each call of the group DFT (two: H' and M), timed
	// around the call; DFTPoints their size (the domain).
	DFTSeconds []float64 `json:"dft_s"`
	DFTPoints  int       `json:"dft_points"`
	// Stages is each progress stage of the conversion ("dft", "c matrix",
	// "fold") from its first report to its end; StageOrder
	// the order they started in (a stage there but not in Stages did not
	// finish).
	Stages     map[string]float64 `json:"stages_s"`
	StageOrder []string           `json:"stage_order"`
	// Progress is each stage's last report: units done of its total, and
	// the seconds since the stage began (the rate of one cut short).
	Progress map[string]StageProgress `json:"progress"`
	Peaks    Peaks                    `json:"peaks"`
	// FreedBytes is the monomial key's H and L, dropped once converted
	// (and, with the same-proof check, once proved with).
	FreedBytes int64 `json:"monomial_h_l_freed_bytes"`
	// HeapAfter is the live heap after dropping them (after a GC).
	HeapAfter int64 `json:"heap_after_bytes"`
	// SameProof is the check of partition 0 (-same-proof); nil without it.
	SameProof *SameProof `json:"same_proof,omitempty"`
}

// StageProgress is a conversion stage's last progress report.
type StageProgress struct {
	Done    int64   `json:"done"`
	Total   int64   `json:"total"`
	Seconds float64 `json:"seconds"`
}

// SameProof is partition 0 proved with the monomial and the converted key,
// the same r and s, on the selected backend.
type SameProof struct {
	Partition int    `json:"partition"`
	Backend   string `json:"backend"`
	// Identical: the two proofs' bytes are the same; Verified: the
	// converted key's proof verifies against the partition's public inputs.
	Identical bool `json:"identical"`
	Verified  bool `json:"verified"`
	// Monomial and Converted are the two proofs (192 bytes, hex).
	Monomial  string `json:"monomial_proof"`
	Converted string `json:"converted_proof"`
	// Loading each key on the backend and proving with it.
	MonomialLoad   float64 `json:"monomial_load_s"`
	MonomialProve  float64 `json:"monomial_prove_s"`
	ConvertedLoad  float64 `json:"converted_load_s"`
	ConvertedProve float64 `json:"converted_prove_s"`
	Seconds        float64 `json:"seconds"`
	Peaks          Peaks   `json:"peaks"`
}

// Backend is the prover as the worker selected it.
type Backend struct {
	Name      string   `json:"name"`
	Why       string   `json:"why"`
	Devices   []string `json:"devices"`
	Residency string   `json:"residency"`
	// LoadSeconds is NewProver: the parameters loaded onto every device.
	LoadSeconds float64 `json:"load_s"`
	// HostKeyReleased: every device holds the parameters in device memory,
	// so the host copy was dropped (node.ShapeParams) and collected.
	HostKeyReleased bool `json:"host_key_released"`
	// VRAMParams is the device memory the loaded parameters took per
	// device (drop of free memory across the load); nil without a GPU.
	VRAMParams map[int]int64 `json:"vram_params_bytes,omitempty"`
	VRAMNote   string        `json:"vram_note"`
	// SynthesisCPUNote says how synthesis CPU time is measured.
	SynthesisCPUNote string `json:"synthesis_cpu_note"`
}

// Run is one configuration proving the job.
type Run struct {
	Name             string   `json:"name"`
	Interlock        string   `json:"interlock"`
	WorkersPerDevice int      `json:"gpu_workers_per_device"`
	Devices          []string `json:"devices"`
	Slots            int      `json:"slots"`
	VRAMBudget       int64    `json:"vram_budget_bytes"`
	Partitions       int      `json:"partitions"`
	// WarmupPartitions were proved (and verified) just before the run and
	// not measured (-warmup): one per slot.
	WarmupPartitions int `json:"warmup_partitions,omitempty"`
	Verified         int `json:"verified"`
	Failed           int `json:"failed"`

	Wall       float64 `json:"wall_s"`
	Throughput float64 `json:"partitions_per_min"` // verified / wall: the job's rate, pipeline fill included
	// SteadyThroughput is the rate between the first and the last verified
	// partition, (n − 1) / (last end − first end): what a stream of jobs
	// gets once the slots' pipeline is full (0 below two partitions).
	SteadyThroughput float64 `json:"steady_partitions_per_min"`
	LatencyMedian    float64 `json:"latency_median_s"`
	LatencyMax       float64 `json:"latency_max_s"`
	SynthMedian      float64 `json:"synthesis_median_s"`
	SynthCPUMedian   float64 `json:"synthesis_core_s_median"`
	// SynthCPUExact: the median is over partitions whose synthesis CPU
	// time is their own (measured on the synthesis threads, or with no
	// other partition in flight); false when every one is a process-wide
	// figure that overlapped other work (an upper bound then).
	SynthCPUExact  bool    `json:"synthesis_core_s_exact"`
	DeviceMedian   float64 `json:"device_s_median"`
	UploadMedian   float64 `json:"upload_s_median"`
	ComputeMedian  float64 `json:"compute_s_median"`
	LockWaitMedian float64 `json:"lock_wait_median_s"`
	LockWaitMax    float64 `json:"lock_wait_max_s"`
	LockWaitTotal  float64 `json:"lock_wait_total_s"`
	VerifyMedian   float64 `json:"verify_median_s"`
	// DeviceBusy is Σ(upload + compute) / (wall × devices): how busy the
	// devices' proving stages kept them.
	DeviceBusy float64 `json:"device_busy_fraction"`
	// CoreSeconds is the process's CPU time over the run per partition
	// (every stage, every thread); CoresUsed its average over the wall.
	CoreSeconds float64 `json:"process_core_s_per_partition"`
	CoresUsed   float64 `json:"cores_used_avg"`
	// VRAMTaskPeak is the largest sum of Task.DeviceBytes held at once on
	// one device (upload start → epilogue end), from the interlock's
	// events: what proofs in flight allocate beside the parameters.
	VRAMTaskPeak int64 `json:"vram_task_peak_bytes"`
	Peaks        Peaks `json:"peaks"`
	// Buffers is what the shape's pool of partition buffers did over the
	// run (node.Prover reuses one set of wires/A/B/C per slot).
	Buffers Buffers `json:"buffers"`

	PartitionsDetail []*Partition `json:"partitions_detail"`
}

// Buffers is the pool of partition buffer sets over one run.
type Buffers struct {
	SetBytes  int64 `json:"set_bytes"`
	Limit     int   `json:"limit_sets"`
	Allocated int64 `json:"allocated_sets"`
	Reused    int64 `json:"reused_sets"`
	Waits     int64 `json:"waits"`
	// Pinned is the sets page-locked at the end of the run (pin_buffers
	// with the CUDA backend: uploads DMA straight from them).
	Pinned int `json:"pinned_sets"`
}

// Partition is one proved partition of a run.
type Partition struct {
	Index     int    `json:"index"`     // order in the job
	Partition int    `json:"partition"` // partition of the C1 output
	Slot      string `json:"slot"`
	Device    int    `json:"device"`

	Start    float64 `json:"start_s"` // since the run's start: synthesis starts
	End      float64 `json:"end_s"`   // verified (or failed)
	Latency  float64 `json:"latency_s"`
	Synth    float64 `json:"synthesis_s"`
	SynthCPU float64 `json:"synthesis_core_s"`
	// SynthCPUThreads: SynthCPU is the synthesis threads' own CPU time
	// (exact); otherwise the process's over the synthesis.
	SynthCPUThreads bool `json:"synthesis_core_s_threads"`
	// Overlapped: another partition was in flight during this synthesis
	// (so a process-wide SynthCPU includes its work too).
	Overlapped bool    `json:"synthesis_overlapped"`
	LockWait   float64 `json:"lock_wait_s"`
	Prove      float64 `json:"prove_s"`
	Prepare    float64 `json:"prepare_s"`
	Upload     float64 `json:"upload_s"`
	// UploadDirect is the witness bytes the upload copied straight from
	// page-locked buffers (pin_buffers), not through staging.
	UploadDirect int64 `json:"upload_direct_bytes"`
	// UploadCoded is the witness values' bytes the upload sent as value
	// codes (the device read only the values coded other).
	UploadCoded int64   `json:"upload_coded_bytes"`
	Compute     float64 `json:"compute_s"`
	Finish      float64 `json:"finish_s"`
	DeviceS     float64 `json:"device_s"` // upload + compute
	H           float64 `json:"h_s,omitempty"`
	MSMH        float64 `json:"msm_h_s,omitempty"`
	// MSMHSplit is the H MSM's window when it ran on split bases (cuda)
	MSMHSplit   int     `json:"msm_h_split_bits,omitempty"`
	MSML        float64 `json:"msm_l_s,omitempty"`
	MSMA        float64 `json:"msm_a_s,omitempty"`
	MSMBG1      float64 `json:"msm_b_g1_s,omitempty"`
	MSMBG2      float64 `json:"msm_b_g2_s,omitempty"`
	DeviceBytes int64   `json:"device_bytes"`
	Verify      float64 `json:"verify_s"`
	Verified    bool    `json:"verified"`
	Error       string  `json:"error,omitempty"`

	start, uploadStart, taskEnd time.Time
	synthCPU0                   time.Duration
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func gib(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(b)/(1<<30))
}

func secs(d time.Duration) float64 { return d.Seconds() }

// printTable writes the runs' table and the notes to w.
func printTable(w io.Writer, r *Report) {
	fmt.Fprintf(w, "c2-bench: shape %s, %s; backend %s %v (%s)\n", r.Shape, r.Input.Label, r.Backend.Name, r.Backend.Devices, r.Backend.Residency)
	fmt.Fprintf(w, "circuit %d constraints (compile %.1fs, peak heap %s GiB); params %s in %.1fs (%s GiB)\n",
		r.Circuit.Constraints, r.Circuit.CompileSeconds, gib(r.Circuit.Peaks.Heap), r.Params.Source, r.Params.Seconds, gib(r.Params.Bytes))
	if c := r.Params.Convert; c != nil {
		fmt.Fprintf(w, "converted to coset-Lagrange in %.1fs (%s; %s); peak RSS %s GiB\n",
			c.Seconds, c.stageLine(), c.DFT, gib(max(c.Peaks.RSSHWM, c.Peaks.RSSSampled)))
		if sp := c.SameProof; sp != nil {
			verdict := "DIFFERENT"
			switch {
			case sp.Identical && sp.Verified:
				verdict = "identical, verified"
			case sp.Identical:
				verdict = "identical, NOT verified"
			case sp.Converted == "":
				verdict = "not finished"
			}
			fmt.Fprintf(w, "same proof of partition %d, monomial and converted key, same r and s on %s: %s\n", sp.Partition, sp.Backend, verdict)
		}
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "interlock\tw/dev\tslots\tparts\twall s\tparts/min\tsteady/min\tlat med s\tlat max s\tsynth s\tsynth core-s\tdev s/part\tupload s\tcompute s\twait med s\twait max s\tdev busy\tRSS/live peak GiB\tVRAM peak GiB\tverified\t")
	for _, run := range r.Runs {
		core := fmt.Sprintf("%.1f", run.SynthCPUMedian)
		if !run.SynthCPUExact {
			core = "≤" + core
		}
		// the sampled peak per device, then the tasks' own peak: sampling
		// can miss a short overlap of tasks, their own peak is exact
		var vramParts []string
		if len(run.Peaks.VRAMUsed) > 0 {
			var parts []string
			for _, d := range slices.Sorted(maps.Keys(run.Peaks.VRAMUsed)) {
				parts = append(parts, gib(run.Peaks.VRAMUsed[d]))
			}
			vramParts = append(vramParts, strings.Join(parts, "/"))
		}
		if run.VRAMTaskPeak > 0 {
			vramParts = append(vramParts, "tasks "+gib(run.VRAMTaskPeak))
		}
		vram := "-"
		if len(vramParts) > 0 {
			vram = strings.Join(vramParts, " ")
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f%%\t%s\t%s\t%d/%d\t\n",
			run.Interlock, run.WorkersPerDevice, run.Slots, run.Partitions, run.Wall, run.Throughput, run.SteadyThroughput, run.LatencyMedian, run.LatencyMax,
			run.SynthMedian, core, run.DeviceMedian, run.UploadMedian, run.ComputeMedian, run.LockWaitMedian, run.LockWaitMax,
			100*run.DeviceBusy, gib(max(run.Peaks.RSSHWM, run.Peaks.RSSSampled))+"/"+gib(run.Peaks.HeapLive), vram, run.Verified, run.Partitions)
	}
	tw.Flush()
	if r.Interrupted != "" {
		fmt.Fprintln(w, "INTERRUPTED: "+r.Interrupted)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

func writeJSON(path string, r *Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
