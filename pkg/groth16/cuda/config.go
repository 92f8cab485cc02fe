package cuda

import (
	"fmt"
	"os"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// EnvLibrary names the environment variable that points at libc2groth16.so
// when Config.LibraryPath is empty.
const EnvLibrary = "C2G_CUDA_LIB"

// DefaultLibraryName is what dlopen searches for (LD_LIBRARY_PATH, the
// loader's cache) when neither Config.LibraryPath nor $C2G_CUDA_LIB is set.
const DefaultLibraryName = "libc2groth16.so"

// Residency says where a key's parameters live.
type Residency string

const (
	// ResidencyAuto: device memory when the parameters fit the budget,
	// else page-locked host memory.
	ResidencyAuto Residency = "auto"
	// ResidencyDevice: parameters copied into device memory at Load.
	ResidencyDevice Residency = "device"
	// ResidencyPinned: parameters stay in page-locked host memory and are
	// streamed to the device in chunks during each MSM.
	ResidencyPinned Residency = "pinned"
)

// Config configures the CUDA backend.
type Config struct {
	// LibraryPath is the libc2groth16.so to load. Empty: $C2G_CUDA_LIB,
	// then DefaultLibraryName through the dynamic loader's search path.
	LibraryPath string
	// Device is the CUDA device index every call of this backend uses.
	// Default 0.
	Device int
	// Residency of the parameters. Default ResidencyAuto.
	Residency Residency
	// MemoryBudget caps the device memory a key's parameters may take in
	// auto residency, in bytes. 0: the device's free memory at Load minus
	// TaskReserve.
	MemoryBudget int64
	// TaskReserve is device memory left for tasks when MemoryBudget is 0,
	// in bytes. 0: room for two tasks of the key's shape with their MSMs in
	// order (c2g_desc_task_bytes; the key overlaps them only where two
	// overlapped tasks fit, docs/cuda.md).
	TaskReserve int64
	// StreamChunk is the number of points per staging chunk when the
	// parameters are pinned in host memory. 0: 2^22.
	StreamChunk int
	// Progress, when set, receives the progress of Load (stage "cuda load",
	// in bytes of parameters) and LoadSynthetic (stage "cuda synthetic
	// key", in queries).
	Progress groth16.Progress
}

func (c Config) withDefaults() Config {
	if c.Residency == "" {
		c.Residency = ResidencyAuto
	}
	return c
}

func (c Config) validate() error {
	switch c.Residency {
	case ResidencyAuto, ResidencyDevice, ResidencyPinned:
	default:
		return fmt.Errorf("cuda: config: residency %q is not auto, device or pinned", c.Residency)
	}
	if c.Device < 0 {
		return fmt.Errorf("cuda: config: device %d is negative", c.Device)
	}
	if c.StreamChunk < 0 || c.StreamChunk > 1<<30 {
		return fmt.Errorf("cuda: config: stream chunk %d outside [0, 2^30]", c.StreamChunk)
	}
	if c.MemoryBudget < 0 || c.TaskReserve < 0 {
		return fmt.Errorf("cuda: config: memory budget and task reserve must not be negative")
	}
	return nil
}

// libraryPath resolves the library to load.
func libraryPath(p string) string {
	if p != "" {
		return p
	}
	if e := os.Getenv(EnvLibrary); e != "" {
		return e
	}
	return DefaultLibraryName
}

// DeviceInfo describes one CUDA device.
type DeviceInfo struct {
	Index      int
	Name       string
	TotalBytes int64
	FreeBytes  int64
	SMs        int
	CCMajor    int
	CCMinor    int
}

// MSMStats describes one standalone MSM.
type MSMStats struct {
	Zero, One, MinusOne, Other int64   // scalar classes: 0, 1, r − 1 (sums of bases), the rest (Pippenger)
	WindowBits                 int     // Pippenger window of the rest
	BatchAffine                bool    // that part accumulated batch-affine (C2G_MSM_AFFINE)
	Split                      bool    // ... on split bases (C2G_MSM_SPLIT=on, G1)
	DeviceMillis               float64 // device time (events) of the MSM itself
}
