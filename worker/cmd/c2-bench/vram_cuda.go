//go:build cgo && !c2nocuda

package main

import "github.com/c2cluster/c2cluster/pkg/groth16/cuda"

// openVRAMProbe opens the CUDA library (the worker's search: path, then
// $C2G_CUDA_LIB, then the loader's path) to read device memory in use:
// cudaMemGetInfo's total − free, which is device-wide (other processes and
// the stream-ordered allocator's cached blocks included). It synchronizes
// nothing, so sampling it beside running kernels is harmless.
// It also returns the number of devices.
func openVRAMProbe(library string) (vramProbe, int, error) {
	lib, err := cuda.Open(library)
	if err != nil {
		return nil, 0, err
	}
	n, err := lib.DeviceCount()
	if err != nil {
		return nil, 0, err
	}
	return func(dev int) (int64, error) {
		info, err := lib.DeviceInfo(dev)
		if err != nil {
			return 0, err
		}
		return info.TotalBytes - info.FreeBytes, nil
	}, n, nil
}
