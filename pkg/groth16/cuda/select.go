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

// pick resolves mode to a backend on cfg's device, or to the CPU (nil): by
// configuration (noGPU nil) or because "auto" found no usable GPU (noGPU
// says why). "cuda" without a usable GPU is an error.
func pick(mode string, cfg Config) (b *Backend, noGPU, err error) {
	switch mode {
	case ModeCPU:
		return nil, nil, nil
	case ModeCUDA, ModeAuto, "":
		b, err := New(cfg)
		if err == nil {
			return b, nil, nil
		}
		if mode == ModeCUDA {
			return nil, nil, fmt.Errorf("backend cuda: %w", err)
		}
		return nil, err, nil
	default:
		return nil, nil, fmt.Errorf("backend: mode %q is not auto, cpu or cuda", mode)
	}
}

// cpuWhy is the log line's reason for taking the CPU.
func cpuWhy(noGPU error) string {
	if noGPU != nil {
		return fmt.Sprintf("auto mode found no usable GPU (%v)", noGPU)
	}
	return "selected by configuration"
}

// Select returns the backend for mode and a line saying which one was
// chosen and why, for the worker's log. In "auto" mode a missing library or
// device selects the CPU backend (the reason says what was missing); in
// "cuda" mode it is an error. cpuOpts configure the CPU backend.
func Select(mode string, cfg Config, cpuOpts ...groth16.CPUOption) (groth16.Backend, string, error) {
	b, noGPU, err := pick(mode, cfg)
	if err != nil {
		return nil, "", err
	}
	if b == nil {
		return groth16.NewCPUBackend(cpuOpts...), "backend cpu: " + cpuWhy(noGPU), nil
	}
	d := b.Device()
	return b, fmt.Sprintf("backend cuda: device %d (%s, %d MiB), library %s",
		d.Index, d.Name, d.TotalBytes>>20, libraryDescription(b)), nil
}

// SelectFixedBase returns the fixed-base multiplication for groth16.SetupR1CS in
// mode (nil: the CPU) and a line saying which and why, like Select.
func SelectFixedBase(mode string, cfg Config) (groth16.FixedBase, string, error) {
	b, noGPU, err := pick(mode, cfg)
	if err != nil {
		return nil, "", err
	}
	if b == nil {
		return nil, "setup: fixed-base multiplications on the CPU: " + cpuWhy(noGPU), nil
	}
	d := b.Device()
	return b.FixedBase(), fmt.Sprintf("setup: fixed-base multiplications on device %d (%s)", d.Index, d.Name), nil
}

// SelectSubgroupChecker returns the subgroup check of parameter points for
// groth16.SubgroupCheckWith in mode (nil: the decoder's CPU check) and a
// line saying which and why, like Select.
func SelectSubgroupChecker(mode string, cfg Config) (groth16.SubgroupChecker, string, error) {
	b, noGPU, err := pick(mode, cfg)
	if err != nil {
		return nil, "", err
	}
	if b == nil {
		return nil, "parameters: subgroup checks on the CPU: " + cpuWhy(noGPU), nil
	}
	d := b.Device()
	return b.SubgroupChecker(), fmt.Sprintf("parameters: subgroup checks on device %d (%s)", d.Index, d.Name), nil
}

// SelectDFT returns the group DFT for groth16.ConvertHCosetLagrange in mode
// (groth16.CPUDFTG1 when the CPU is chosen) and a line saying which and
// why, like Select.
func SelectDFT(mode string, cfg Config) (groth16.G1DFT, string, error) {
	b, noGPU, err := pick(mode, cfg)
	if err != nil {
		return nil, "", err
	}
	if b == nil {
		return groth16.CPUDFTG1, "conversion: group DFTs on the CPU (hours at 2^27 points): " + cpuWhy(noGPU), nil
	}
	d := b.Device()
	return b.DFTG1, fmt.Sprintf("conversion: group DFTs on device %d (%s)", d.Index, d.Name), nil
}
