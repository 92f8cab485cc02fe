//go:build !c2nocuda

package backend

import (
	"errors"
	"fmt"

	"github.com/c2cluster/c2cluster/pkg/groth16"
	"github.com/c2cluster/c2cluster/pkg/groth16/cuda"
)

// maxProbeDevices bounds the probe's device scan.
const maxProbeDevices = 64

func cudaConfig(o Options) cuda.Config {
	return cuda.Config{
		LibraryPath:  o.CUDALibrary,
		Device:       o.Device,
		Residency:    cuda.Residency(o.Residency),
		MemoryBudget: o.MemoryBudget,
	}
}

func init() {
	mustRegister(Factory{
		Name: NameCUDA,
		// The probe opens the library and asks for device 0, 1, ... until
		// one is missing: it works the same in builds with and without cgo
		// (without, cuda.New says so).
		Probe: func(o Options) ([]int, error) {
			var found []int
			for dev := 0; dev < maxProbeDevices; dev++ {
				o.Device = dev
				_, err := cuda.New(cudaConfig(o))
				if err != nil {
					if len(found) > 0 && errors.Is(err, cuda.ErrNoDevice) {
						break
					}
					if len(found) == 0 {
						return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
					}
					return nil, err
				}
				found = append(found, dev)
			}
			return found, nil
		},
		New: func(o Options) (groth16.Backend, error) {
			b, err := cuda.New(cudaConfig(o))
			if err != nil {
				return nil, fmt.Errorf("backend cuda: device %d: %w", o.Device, err)
			}
			return b, nil
		},
		SubgroupChecker: func(o Options) (groth16.SubgroupChecker, error) {
			b, err := cuda.New(cudaConfig(o))
			if err != nil {
				return nil, fmt.Errorf("backend cuda: device %d: %w", o.Device, err)
			}
			return b.SubgroupChecker(), nil
		},
	})
}
