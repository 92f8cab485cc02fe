package backend

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// Backend names of the worker configuration.
const (
	NameAuto = "auto"
	NameCPU  = "cpu"
	NameCUDA = "cuda"
)

// ErrUnavailable: the asked backend cannot run on this host (no library,
// no device). The error text says what is missing.
var ErrUnavailable = errors.New("backend: unavailable")

// Options configure a backend instance.
type Options struct {
	// Device is the device index the backend is bound to (every call it
	// makes uses it explicitly). The CPU backend has one device, 0.
	Device int
	// CPUThreads bounds the CPU backend's goroutines per proof (0: all
	// cores).
	CPUThreads int
	// CUDALibrary is the path of libc2groth16.so ("" : $C2G_CUDA_LIB, then
	// the loader's search path).
	CUDALibrary string
	// Residency of the parameters on a GPU: auto, device or pinned ("" :
	// auto).
	Residency string
	// MemoryBudget caps the device memory of resident parameters, in bytes
	// (0: the backend decides from the free memory).
	MemoryBudget int64
}

// Factory makes backends of one kind.
type Factory struct {
	// Name is the configuration name ("cpu", "cuda").
	Name string
	// Probe returns the device indexes this backend can use here, or an
	// error (wrapping ErrUnavailable) saying why there are none.
	Probe func(opts Options) ([]int, error)
	// New returns a backend bound to opts.Device.
	New func(opts Options) (groth16.Backend, error)
	// SubgroupChecker, when set, returns a checker of parameter points'
	// subgroup membership on opts.Device (groth16.SubgroupCheckWith), which
	// a worker uses at start instead of the decoder's per-point CPU check;
	// nil: the CPU check.
	SubgroupChecker func(opts Options) (groth16.SubgroupChecker, error)
}

var registry = struct {
	mu sync.RWMutex
	m  map[string]Factory
}{m: map[string]Factory{}}

// Register adds a factory. A second factory of the same name, an empty
// name, "auto" or a factory without Probe or New is an error.
func Register(f Factory) error {
	if f.Name == "" || f.Name == NameAuto || strings.ContainsAny(f.Name, " \t") {
		return fmt.Errorf("backend: Register: invalid name %q", f.Name)
	}
	if f.Probe == nil || f.New == nil {
		return fmt.Errorf("backend: Register %q: Probe and New are required", f.Name)
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, ok := registry.m[f.Name]; ok {
		return fmt.Errorf("backend: Register: %q is already registered", f.Name)
	}
	registry.m[f.Name] = f
	return nil
}

func mustRegister(f Factory) {
	if err := Register(f); err != nil {
		panic(err) // a built-in registration is a programming error caught by every test
	}
}

// Lookup returns the factory registered under name.
func Lookup(name string) (Factory, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	f, ok := registry.m[name]
	return f, ok
}

// Names lists the registered backends, sorted, plus "auto".
func Names() []string {
	registry.mu.RLock()
	names := make([]string, 0, len(registry.m)+1)
	for n := range registry.m {
		names = append(names, n)
	}
	registry.mu.RUnlock()
	sort.Strings(names)
	return append([]string{NameAuto}, names...)
}

// Selection is the resolved backend of a worker.
type Selection struct {
	Factory Factory
	// Devices are the device indexes to run slots on.
	Devices []int
	// Why is one line for the log: which backend and why.
	Why string
}

// Select resolves name ("" means auto) to a factory and its devices.
// devices, when not empty, are the configured device indexes: each must be
// one the backend's probe reports. Empty devices means all of them.
func Select(name string, opts Options, devices []int) (Selection, error) {
	if name == "" {
		name = NameAuto
	}
	if name == NameAuto {
		if f, ok := Lookup(NameCUDA); ok {
			found, err := f.Probe(opts)
			if err == nil && len(found) > 0 {
				s, err := pick(f, found, devices)
				if err != nil {
					return Selection{}, err
				}
				s.Why = fmt.Sprintf("backend cuda (auto): devices %v", s.Devices)
				return s, nil
			}
			f, ok := Lookup(NameCPU)
			if !ok {
				return Selection{}, fmt.Errorf("%w: no cpu backend registered", ErrUnavailable)
			}
			s, err2 := pick(f, []int{0}, devices)
			if err2 != nil {
				return Selection{}, fmt.Errorf("backend auto fell back to cpu (%v): %w", err, err2)
			}
			s.Why = fmt.Sprintf("backend cpu (auto): no usable GPU: %v", err)
			return s, nil
		}
		name = NameCPU
	}
	f, ok := Lookup(name)
	if !ok {
		return Selection{}, fmt.Errorf("backend: %q is not one of %s", name, strings.Join(Names(), ", "))
	}
	found, err := f.Probe(opts)
	if err != nil {
		return Selection{}, fmt.Errorf("backend %s: %w", name, err)
	}
	s, err := pick(f, found, devices)
	if err != nil {
		return Selection{}, err
	}
	s.Why = fmt.Sprintf("backend %s (configured): devices %v", name, s.Devices)
	return s, nil
}

func pick(f Factory, found, want []int) (Selection, error) {
	if len(want) == 0 {
		return Selection{Factory: f, Devices: append([]int(nil), found...)}, nil
	}
	have := map[int]bool{}
	for _, d := range found {
		have[d] = true
	}
	seen := map[int]bool{}
	for _, d := range want {
		if !have[d] {
			return Selection{}, fmt.Errorf("backend %s: device %d is configured but not present (found %v)", f.Name, d, found)
		}
		if seen[d] {
			return Selection{}, fmt.Errorf("backend %s: device %d is configured twice", f.Name, d)
		}
		seen[d] = true
	}
	return Selection{Factory: f, Devices: append([]int(nil), want...)}, nil
}

func init() {
	mustRegister(Factory{
		Name: NameCPU,
		Probe: func(Options) ([]int, error) {
			return []int{0}, nil
		},
		New: func(o Options) (groth16.Backend, error) {
			if o.Device != 0 {
				return nil, fmt.Errorf("backend cpu: device %d: the CPU backend has one device, 0", o.Device)
			}
			if o.CPUThreads < 0 {
				return nil, fmt.Errorf("backend cpu: CPUThreads %d is negative", o.CPUThreads)
			}
			var opts []groth16.CPUOption
			if o.CPUThreads > 0 {
				opts = append(opts, groth16.CPUWorkers(o.CPUThreads))
			}
			return groth16.NewCPUBackend(opts...), nil
		},
	})
}
