package cuda

import (
	"fmt"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// Backend modes of a worker's configuration.
const (
	ModeAuto = "auto" // CUDA when the library and the device are there, else CPU
	ModeCPU  = "cpu"
	ModeCUDA = "cuda"
)

// Select returns the backend for mode and a line saying which one was
// chosen and why, for the worker's log. In "auto" mode a missing library or
// device selects the CPU backend (the reason says what was missing); in
// "cuda" mode it is an error. cpuOpts configure the CPU backend.
func Select(mode string, cfg Config, cpuOpts ...groth16.CPUOption) (groth16.Backend, string, error) {
	switch mode {
	case ModeCPU:
		return groth16.NewCPUBackend(cpuOpts...), "backend cpu: selected by configuration", nil
	case ModeCUDA, ModeAuto, "":
		b, err := New(cfg)
		if err == nil {
			d := b.Device()
			return b, fmt.Sprintf("backend cuda: device %d (%s, %d MiB), library %s",
				d.Index, d.Name, d.TotalBytes>>20, libraryDescription(b)), nil
		}
		if mode == ModeCUDA {
			return nil, "", fmt.Errorf("backend cuda: %w", err)
		}
		return groth16.NewCPUBackend(cpuOpts...), fmt.Sprintf("backend cpu: auto mode found no usable GPU (%v)", err), nil
	default:
		return nil, "", fmt.Errorf("backend: mode %q is not auto, cpu or cuda", mode)
	}
}

// SelectFixedBase returns the fixed-base multiplication for groth16.Setup in
// mode (nil: the CPU) and a line saying which and why, like Select.
func SelectFixedBase(mode string, cfg Config) (groth16.FixedBase, string, error) {
	switch mode {
	case ModeCPU:
		return nil, "setup: fixed-base multiplications on the CPU (configuration)", nil
	case ModeCUDA, ModeAuto, "":
		b, err := New(cfg)
		if err == nil {
			d := b.Device()
			return b.FixedBase(), fmt.Sprintf("setup: fixed-base multiplications on device %d (%s)", d.Index, d.Name), nil
		}
		if mode == ModeCUDA {
			return nil, "", fmt.Errorf("backend cuda: %w", err)
		}
		return nil, fmt.Sprintf("setup: fixed-base multiplications on the CPU: auto mode found no usable GPU (%v)", err), nil
	default:
		return nil, "", fmt.Errorf("backend: mode %q is not auto, cpu or cuda", mode)
	}
}
