package node

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/queue"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	"github.com/c2cluster/c2cluster/worker/backend"
	"github.com/c2cluster/c2cluster/worker/interlock"
)

// Defaults of Config.
const (
	BackendDefault             = backend.NameAuto
	InterlockDefault           = interlock.ModeDefault
	GPUWorkersPerDeviceDefault = 3 // GPU backends: the other slots' syntheses and uploads fill the GPU while one computes (docs/worker.md, "Slots and the partition pipeline")
	CPUWorkersPerDeviceDefault = 1 // the CPU backend already uses every core per proof
	HeartbeatIntervalDefault   = 5 * time.Second
	DrainTimeoutDefault        = 2 * time.Minute
	AbortTimeoutDefault        = 30 * time.Second
	InputCacheDefault          = 4
	MaxSlots                   = 256
)

// Config configures a worker. Zero values mean the defaults; the YAML
// names are those of the worker's configuration file.
type Config struct {
	// ID names the worker in the registry, logs and spans. Default
	// "<host>-<pid>".
	ID string `yaml:"id"`
	// Host is the host name reported in the registry. Default
	// os.Hostname().
	Host string `yaml:"host"`
	// Shapes are the proof shapes this worker proves ("32GiB", "test-micro",
	// …); their parameters are loaded at start. Required.
	Shapes []string `yaml:"shapes"`
	// ParamsDir holds <shape>.params of every test shape (and <shape>.vk,
	// checked against the .params when present), and the checked markers
	// of Filecoin's parameter files when their folder is read-only.
	// Required.
	ParamsDir string `yaml:"params_dir"`
	// OfficialParamsDir holds Filecoin's official parameter files, by
	// their official names, for the official shapes (2KiB … 64GiB): the
	// folder `lotus fetch-params` / `curio fetch-params` fill. Default
	// $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters
	// (docs/parameters.md).
	OfficialParamsDir string `yaml:"official_params_dir"`
	// TrustedParams skips the subgroup check of every point of a test
	// shape's parameters at load. Filecoin's official files are checked
	// once (digest and every point) and remembered in a marker beside them
	// whatever this says. Default false: check.
	TrustedParams bool `yaml:"trusted_params"`
	// HForm chooses the form of the proving keys' H query: auto uses a
	// parameter file's H file (its key converted to coset-Lagrange form by
	// c2-params -convert-h; docs/parameters.md) when one is present and
	// valid, the file's monomial key otherwise; coset-lagrange requires
	// the H file; monomial never reads one. Default auto.
	HForm string `yaml:"h_form"`
	// Backend is auto, cpu or cuda. Default auto: CUDA when the library and
	// a device are there, else the CPU (logged at start).
	Backend string `yaml:"backend"`
	// Devices are the device indexes to use. Default: every device the
	// backend finds (the CPU backend has one, 0).
	Devices []int `yaml:"devices"`
	// GPUWorkersPerDevice is the number of slots per device. Default 3 on
	// a GPU backend (GPUWorkersPerDeviceDefault), 1 on the CPU backend.
	GPUWorkersPerDevice int `yaml:"gpu_workers_per_device"`
	// Interlock is the device lock discipline: none, exclusive, compute or
	// split (worker/interlock). Default compute.
	Interlock string `yaml:"interlock"`
	// VRAMBudget is each device's memory, in bytes, that proofs in flight
	// may reserve at once (resident parameters are outside it); a task
	// waits for its Task.DeviceBytes() to fit. Default 0: no limit.
	VRAMBudget int64 `yaml:"vram_budget_bytes"`
	// CPUThreads bounds the CPU backend's goroutines per proof. Default 0:
	// all cores.
	CPUThreads int `yaml:"cpu_threads"`
	// CUDALibrary is the path of libc2groth16.so. Default: $C2G_CUDA_LIB,
	// then the loader's search path.
	CUDALibrary string `yaml:"cuda_library"`
	// Residency of parameters on a GPU: auto, device or pinned. Default
	// auto.
	Residency string `yaml:"residency"`
	// PinBuffers page-locks every set of partition buffers once, when its
	// pool allocates it, so that the CUDA backend's upload DMAs straight
	// from it instead of copying through its staging buffers (page-locked
	// memory: slots × set size, 2 × ~16 GiB at 32 GiB). A set that cannot
	// be locked is used as it is (logged once). CPU backend: no effect.
	// Default (unset) true.
	PinBuffers *bool `yaml:"pin_buffers"`
	// ParamsMemoryBudget caps the device memory of resident parameters per
	// device, in bytes. Default 0: the backend decides.
	ParamsMemoryBudget int64 `yaml:"params_memory_budget_bytes"`
	// Lanes are the priority lanes polled, in order. Default: the queue's
	// lanes (high, normal, low).
	Lanes []string `yaml:"lanes"`
	// HeartbeatInterval is how often the registration in Redis is
	// refreshed. Default 5 s; it must stay below the store's WorkerTTL.
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`
	// DrainTimeout is phase one of a drain: how long in-flight partitions
	// may run on after Stop before they are aborted and handed back.
	// Default 2 min.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// AbortTimeout bounds phase two: how long Stop waits for aborted slots
	// to return. Default 30 s.
	AbortTimeout time.Duration `yaml:"abort_timeout"`
	// RetryDelay is the redelivery delay after a transient failure.
	// Default 0: the queue's NakDelay.
	RetryDelay time.Duration `yaml:"retry_delay"`
	// OutageHold is how long a slot holds its partition while Redis or
	// NATS is unreachable (the lease kept alive, no delivery spent) before
	// it hands the partition back as a transient failure. Default 30 min.
	OutageHold time.Duration `yaml:"-"` // library only: not a worker setting yet
	// InputCache is how many jobs' parsed C1 outputs are kept, so the
	// partitions of one job download and parse it once. Default 4.
	InputCache int `yaml:"input_cache"`

	// Logger for the worker. Default slog.Default().
	Logger *slog.Logger `yaml:"-"`
	// Metrics of the process. Default a fresh telemetry.NewMetrics().
	Metrics *telemetry.Metrics `yaml:"-"`
	// Observer sees the interlock events of every device (tests, debug).
	Observer func(interlock.Event) `yaml:"-"`
	// Hooks are test and fault-injection points.
	Hooks Hooks `yaml:"-"`
	// Version is reported in the registry.
	Version string `yaml:"-"`
}

// Stage names passed to Hooks.BeforeStage, in order.
const (
	StageInput      = "input"
	StageSynthesize = "synthesize"
	StageProve      = "prove"
	StageVerify     = "verify"
	StageComplete   = "complete"
)

// Hooks are synchronization and fault-injection points for tests and chaos
// drills. Nil fields are skipped.
type Hooks struct {
	// BeforeStage runs before each stage of a partition (Stage*). An error
	// fails the partition as an error of that stage would (wrap it with
	// queue.Permanent to terminate the task).
	BeforeStage func(ctx context.Context, stage string, d *queue.Delivery) error
}

// pinBuffers is PinBuffers with its default.
func (c Config) pinBuffers() bool { return c.PinBuffers == nil || *c.PinBuffers }

func (c Config) withDefaults() (Config, error) {
	if c.Host == "" {
		h, err := os.Hostname()
		if err != nil {
			h = "unknown-host"
		}
		c.Host = h
	}
	if c.ID == "" {
		c.ID = c.Host + "-" + strconv.Itoa(os.Getpid())
	}
	if c.Backend == "" {
		c.Backend = BackendDefault
	}
	mode, err := interlock.ParseMode(c.Interlock)
	if err != nil {
		return c, fmt.Errorf("node: Config.Interlock: %w", err)
	}
	c.Interlock = string(mode)
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = HeartbeatIntervalDefault
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DrainTimeoutDefault
	}
	if c.AbortTimeout == 0 {
		c.AbortTimeout = AbortTimeoutDefault
	}
	if c.InputCache == 0 {
		c.InputCache = InputCacheDefault
	}
	if c.OutageHold <= 0 {
		c.OutageHold = OutageHoldDefault
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = telemetry.NewMetrics()
	}
	return c, nil
}

// validate checks the fields that do not need the backend; the error names
// the field.
func (c Config) validate() error {
	if err := c.validateProver(); err != nil {
		return err
	}
	if len(c.Shapes) == 0 {
		return fmt.Errorf("node: Config.Shapes is empty: name at least one shape (%v)", porep.ShapeNames())
	}
	seen := map[string]bool{}
	for _, s := range c.Shapes {
		if _, err := porep.ShapeByName(s); err != nil {
			return fmt.Errorf("node: Config.Shapes: %w", err)
		}
		if seen[s] {
			return fmt.Errorf("node: Config.Shapes: %q listed twice", s)
		}
		seen[s] = true
	}
	if c.ParamsDir == "" {
		return fmt.Errorf("node: Config.ParamsDir is empty")
	}
	if fi, err := os.Stat(c.ParamsDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("node: Config.ParamsDir %q is not a readable directory", c.ParamsDir)
	}
	switch {
	case c.HeartbeatInterval < 10*time.Millisecond:
		return fmt.Errorf("node: Config.HeartbeatInterval %v is below 10ms", c.HeartbeatInterval)
	case c.DrainTimeout < 0 || c.AbortTimeout < 0 || c.RetryDelay < 0:
		return fmt.Errorf("node: Config.DrainTimeout, AbortTimeout and RetryDelay must not be negative")
	case c.InputCache < 0:
		return fmt.Errorf("node: Config.InputCache %d is negative", c.InputCache)
	}
	return nil
}

// validateHForm checks HForm.
func (c Config) validateHForm() error {
	switch c.HForm {
	case "", HFormAuto, groth16.HMonomial.String(), groth16.HCosetLagrange.String():
		return nil
	}
	return fmt.Errorf("node: Config.HForm %q is not auto, monomial or coset-lagrange", c.HForm)
}

// validateProver checks the fields a Prover uses (slots, devices, backend
// options); the error names the field.
func (c Config) validateProver() error {
	if err := queue.CheckName("Config.ID", c.ID); err != nil {
		// Worker ids become Redis keys and slot names: keep them plain.
		return fmt.Errorf("node: %w", err)
	}
	switch {
	case c.GPUWorkersPerDevice < 0:
		return fmt.Errorf("node: Config.GPUWorkersPerDevice %d is negative", c.GPUWorkersPerDevice)
	case c.VRAMBudget < 0:
		return fmt.Errorf("node: Config.VRAMBudget %d is negative", c.VRAMBudget)
	case c.ParamsMemoryBudget < 0:
		return fmt.Errorf("node: Config.ParamsMemoryBudget %d is negative", c.ParamsMemoryBudget)
	case c.CPUThreads < 0:
		return fmt.Errorf("node: Config.CPUThreads %d is negative", c.CPUThreads)
	}
	for _, d := range c.Devices {
		if d < 0 {
			return fmt.Errorf("node: Config.Devices: index %d is negative", d)
		}
	}
	if err := c.validateHForm(); err != nil {
		return err
	}
	switch c.Residency {
	case "", "auto", "device", "pinned":
	default:
		return fmt.Errorf("node: Config.Residency %q is not auto, device or pinned", c.Residency)
	}
	return nil
}
