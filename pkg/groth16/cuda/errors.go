package cuda

import (
	"context"
	"errors"
	"fmt"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// Sentinel errors; DeviceError unwraps to the matching one.
var (
	// ErrLibrary: libc2groth16.so cannot be found or loaded, lacks an entry
	// point, or was built for another ABI version (or this binary was built
	// without cgo).
	ErrLibrary = errors.New("cuda: prover library unavailable")
	// ErrNoDevice: no CUDA device, no driver, or a device index out of range.
	ErrNoDevice = errors.New("cuda: no such CUDA device")
	// ErrDeviceOOM: device (or page-locked host) memory is exhausted.
	ErrDeviceOOM = errors.New("cuda: device out of memory")
	// ErrInvalid: the library refused an argument (a bug in the caller).
	ErrInvalid = errors.New("cuda: invalid argument")
	// ErrCUDA: a CUDA call failed; the message carries the CUDA error.
	ErrCUDA = errors.New("cuda: CUDA error")
	// ErrInternal: the library hit an internal inconsistency.
	ErrInternal = errors.New("cuda: internal error")
)

// Library status codes (c2g.h).
const (
	codeInvalid     = 1
	codeCUDA        = 2
	codeOOM         = 3
	codeNoDevice    = 4
	codeCancelled   = 5
	codeInternal    = 6
	codeUnsatisfied = 7
)

// DeviceError is a failure reported by the library.
type DeviceError struct {
	Op       string // the call that failed ("upload", "compute", "msm", ...)
	Device   int    // device index, -1 when not device-specific
	Code     int    // c2g_status
	CUDACode int    // cudaError_t, when the failure came from CUDA
	Msg      string // the library's message
}

func (e *DeviceError) Error() string {
	dev := ""
	if e.Device >= 0 {
		dev = fmt.Sprintf(" on device %d", e.Device)
	}
	return fmt.Sprintf("cuda: %s%s: %s", e.Op, dev, e.Msg)
}

// Unwrap maps the status code to a sentinel: ErrDeviceOOM, ErrNoDevice,
// ErrInvalid, ErrCUDA, ErrInternal, context.Canceled for a cancelled
// compute, groth16.ErrUnsatisfied for a witness that fails the constraints.
func (e *DeviceError) Unwrap() error {
	switch e.Code {
	case codeInvalid:
		return ErrInvalid
	case codeCUDA:
		return ErrCUDA
	case codeOOM:
		return ErrDeviceOOM
	case codeNoDevice:
		return ErrNoDevice
	case codeCancelled:
		return context.Canceled
	case codeUnsatisfied:
		return groth16.ErrUnsatisfied
	default:
		return ErrInternal
	}
}

func newDeviceError(op string, device, code, cudaCode int, msg string) error {
	return &DeviceError{Op: op, Device: device, Code: code, CUDACode: cudaCode, Msg: msg}
}
