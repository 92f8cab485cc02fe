//go:build cgo

package cuda

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// hostRegs counts the library's registered host ranges (per process: the
// registry lives in the library, which is loaded once).
var hostRegs struct {
	ranges, bytes atomic.Int64
}

// RegisteredHost reports the host ranges registered through RegisterHost
// and not yet unregistered, and their bytes.
func (l *Library) RegisteredHost() (ranges, bytes int64) {
	return hostRegs.ranges.Load(), hostRegs.bytes.Load()
}

// RegisterHost page-locks n bytes at p for every device
// (c2g_host_register), so that a witness array inside the range uploads
// straight from it (one DMA, no staging copy). p is Go memory (or C
// memory); Go memory is pinned (runtime.Pinner) until unregister, and the
// caller must keep it referenced and leave it where it is until then.
// unregister unlocks the range and unpins it; it may be called once (later
// calls do nothing). Registering locks the pages one by one: do it once per
// long-lived buffer. Errors: DeviceError (ErrInvalid for a nil pointer,
// n <= 0 or an overlap with a registered range; ErrDeviceOOM or ErrCUDA when
// the driver refuses; ErrNoDevice without one).
func (l *Library) RegisterHost(p unsafe.Pointer, n int64) (unregister func() error, err error) {
	var pin runtime.Pinner
	if p != nil {
		pin.Pin(p)
	}
	if n < 0 {
		n = 0 // the library refuses zero bytes with its own message
	}
	if err := l.a.hostRegister(p, n); err != nil {
		pin.Unpin()
		return nil, err
	}
	hostRegs.ranges.Add(1)
	hostRegs.bytes.Add(n)
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			err = l.a.hostUnregister(p)
			// forgotten by the library either way (c2g_host_unregister)
			hostRegs.ranges.Add(-1)
			hostRegs.bytes.Add(-n)
			pin.Unpin()
		})
		return err
	}, nil
}

// RegisterHost registers host memory with the backend's library (see
// Library.RegisterHost); registrations hold for every device.
func (b *Backend) RegisterHost(p unsafe.Pointer, n int64) (unregister func() error, err error) {
	return b.lib.RegisterHost(p, n)
}

// RegisterBuffers page-locks a pool set's arrays (wires, and A, B, C up to
// their capacity, and their value codes), so that a witness synthesized
// into the set uploads straight from it: as value codes, the device
// reading only the values coded other from the set (Timings.
// UploadCodedBytes). It fits groth16.BufferPool.OnAlloc. On an error nothing
// stays registered. release unregisters the arrays (errors are dropped:
// the library forgets the ranges either way).
func (b *Backend) RegisterBuffers(set *groth16.Buffers) (release func(), err error) {
	if set == nil {
		return nil, errors.New("cuda: register buffers: nil set")
	}
	return b.registerAll(
		[][]fr.Element{set.Wires, set.A[:cap(set.A)], set.B[:cap(set.B)], set.C[:cap(set.C)]},
		[][]uint8{set.WireCodes, set.ACodes[:cap(set.ACodes)], set.BCodes[:cap(set.BCodes)], set.CCodes[:cap(set.CCodes)]})
}

// RegisterWitness page-locks a witness's A, B, C and Aux and their value
// codes, as RegisterBuffers does a pool set's (benchmarks and tests whose
// witness is not in a pool set). On an error nothing stays registered.
func (b *Backend) RegisterWitness(w *groth16.Synthesized) (release func(), err error) {
	if w == nil {
		return nil, errors.New("cuda: register witness: nil witness")
	}
	var codes [][]uint8
	if c := w.Codes; c != nil {
		codes = [][]uint8{c.A, c.B, c.C, c.Aux}
	}
	return b.registerAll([][]fr.Element{w.A, w.B, w.C, w.Aux}, codes)
}

// registerAll registers every non-empty array; on an error it unregisters
// what it had registered and returns the error.
func (b *Backend) registerAll(vals [][]fr.Element, codes [][]uint8) (release func(), err error) {
	var undo []func() error
	release = func() {
		for _, u := range undo {
			_ = u()
		}
	}
	register := func(p unsafe.Pointer, n int64) {
		if err == nil && n > 0 {
			var u func() error
			if u, err = b.RegisterHost(p, n); err == nil {
				undo = append(undo, u)
			}
		}
	}
	for _, v := range vals {
		if len(v) > 0 {
			register(unsafe.Pointer(&v[0]), int64(len(v))*frSize)
		}
	}
	for _, v := range codes {
		if len(v) > 0 {
			register(unsafe.Pointer(&v[0]), int64(len(v)))
		}
	}
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// UploadBytes reports how the task's Upload copied the witness: bytes
// straight from registered host memory (RegisterHost) and bytes through the
// staging buffers (zero before Compute has fetched the results).
func (t *task) UploadBytes() (direct, staged int64) {
	if t.res == nil {
		return 0, 0
	}
	return t.res.directBytes, t.res.stagedBytes
}

// UploadCodes reports the bytes of witness values the task's Upload sent as
// value codes and how many values among them it read from host memory
// (coded other); zero before Compute has fetched the results.
func (t *task) UploadCodes() (codedBytes, otherValues int64) {
	if t.res == nil {
		return 0, 0
	}
	return t.res.codedBytes, t.res.otherValues
}
