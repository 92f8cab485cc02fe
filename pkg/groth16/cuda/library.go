//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Sizes of gnark-crypto's in-memory types, which the library shares.
const (
	frSize   = 32
	g1Size   = 96
	g2Size   = 192
	g1XYZZ   = 192
	g2XYZZ   = 384
	maxPoint = 1<<31 - 1
)

func init() {
	// The ABI relies on these layouts; fail loudly at start if gnark changes.
	if unsafe.Sizeof(fr.Element{}) != frSize || unsafe.Sizeof(curve.G1Affine{}) != g1Size ||
		unsafe.Sizeof(curve.G2Affine{}) != g2Size {
		panic("cuda: gnark-crypto element layout changed; the C ABI needs 32/96/192-byte fr/G1/G2")
	}
}

// Library is a loaded libc2groth16.so.
type Library struct{ a *api }

// Open loads the library at path (see Config.LibraryPath for the search
// when path is empty). Errors wrap ErrLibrary and name the path.
func Open(path string) (*Library, error) {
	a, err := openAPI(libraryPath(path))
	if err != nil {
		return nil, err
	}
	return &Library{a: a}, nil
}

// Path is the path the library was loaded from.
func (l *Library) Path() string { return l.a.path }

// DeviceCount returns the number of CUDA devices (0 without a driver).
func (l *Library) DeviceCount() (int, error) { return l.a.deviceCount() }

// DeviceInfo describes device dev.
func (l *Library) DeviceInfo(dev int) (DeviceInfo, error) { return l.a.deviceInfo(dev) }

// Buffer is device memory owned by the library (benchmarks, tests).
type Buffer struct {
	l     *Library
	dev   int
	p     cBuffer
	bytes int64
}

// Alloc allocates bytes of device memory on dev.
func (l *Library) Alloc(dev int, bytes int64) (*Buffer, error) {
	if bytes < 0 {
		return nil, fmt.Errorf("%w: negative buffer size", ErrInvalid)
	}
	p, err := l.a.bufferAlloc(dev, bytes)
	if err != nil {
		return nil, err
	}
	return &Buffer{l: l, dev: dev, p: p, bytes: bytes}, nil
}

// Free releases the buffer; safe to call more than once.
func (b *Buffer) Free() {
	if b.p != nil {
		b.l.a.bufferFree(b.p)
		b.p = nil
	}
}

// Bytes is the buffer's size.
func (b *Buffer) Bytes() int64 { return b.bytes }

// Device is the buffer's device.
func (b *Buffer) Device() int { return b.dev }

func (b *Buffer) write(off int64, p unsafe.Pointer, n int64) error {
	if b.p == nil {
		return errors.New("cuda: buffer freed")
	}
	if n == 0 {
		return nil
	}
	return b.l.a.bufferWrite(b.dev, b.p, off, p, n)
}

func (b *Buffer) read(off int64, p unsafe.Pointer, n int64) error {
	if b.p == nil {
		return errors.New("cuda: buffer freed")
	}
	if n == 0 {
		return nil
	}
	return b.l.a.bufferRead(b.dev, b.p, off, p, n)
}

// WriteFr copies v to the start of the buffer.
func (b *Buffer) WriteFr(v []fr.Element) error { return writeSlice(b, v) }

// WriteG1 copies v to the start of the buffer.
func (b *Buffer) WriteG1(v []curve.G1Affine) error { return writeSlice(b, v) }

// WriteG2 copies v to the start of the buffer.
func (b *Buffer) WriteG2(v []curve.G2Affine) error { return writeSlice(b, v) }

// ReadFr reads the first n elements.
func (b *Buffer) ReadFr(n int) ([]fr.Element, error) { return readSlice[fr.Element](b, n) }

// ReadG1 reads the first n points.
func (b *Buffer) ReadG1(n int) ([]curve.G1Affine, error) { return readSlice[curve.G1Affine](b, n) }

// ReadG2 reads the first n points.
func (b *Buffer) ReadG2(n int) ([]curve.G2Affine, error) { return readSlice[curve.G2Affine](b, n) }

// writeSlice copies v's bytes (gnark-crypto's in-memory layout, which the
// library shares; see init) to the start of b.
func writeSlice[T any](b *Buffer, v []T) error {
	if len(v) == 0 {
		return nil
	}
	return b.write(0, unsafe.Pointer(&v[0]), int64(len(v))*int64(unsafe.Sizeof(v[0])))
}

// readSlice reads n values of T from the start of b.
func readSlice[T any](b *Buffer, n int) ([]T, error) {
	v := make([]T, n)
	if n == 0 {
		return v, nil
	}
	return v, b.read(0, unsafe.Pointer(&v[0]), int64(n)*int64(unsafe.Sizeof(v[0])))
}

// CopyFrom copies bytes from the start of src to the start of b.
func (b *Buffer) CopyFrom(src *Buffer, bytes int64) error {
	if b.p == nil || src.p == nil {
		return errors.New("cuda: buffer freed")
	}
	return b.l.a.bufferCopy(b.dev, b.p, 0, src.p, 0, bytes)
}

// FillRandomFr writes n pseudo-random scalars (see c2g.h): a share frac01
// of them 0 or 1, the rest uniform below 2^254.
func (b *Buffer) FillRandomFr(n int, seed uint64, frac01 float64) error {
	return b.l.a.fillRandomFr(b.dev, b.p, int64(n), seed, frac01)
}

// FillRandomG1 writes n distinct pseudo-random G1 points.
func (b *Buffer) FillRandomG1(n int, seed uint64) error {
	return b.l.a.fillRandomPoints(b.dev, b.p, 1, int64(n), seed)
}

// FillRandomG2 writes n distinct pseudo-random G2 points.
func (b *Buffer) FillRandomG2(n int, seed uint64) error {
	return b.l.a.fillRandomPoints(b.dev, b.p, 2, int64(n), seed)
}

func checkMSM(bases, scalars *Buffer, n, pointSize int) error {
	switch {
	case bases == nil || scalars == nil || bases.p == nil || scalars.p == nil:
		return fmt.Errorf("%w: msm: nil or freed buffer", ErrInvalid)
	case n < 0 || n > maxPoint:
		return fmt.Errorf("%w: msm: n = %d outside [0, 2^31)", ErrInvalid, n)
	case int64(n)*int64(pointSize) > bases.bytes:
		return fmt.Errorf("%w: msm: %d bases do not fit a buffer of %d bytes", ErrInvalid, n, bases.bytes)
	case int64(n)*frSize > scalars.bytes:
		return fmt.Errorf("%w: msm: %d scalars do not fit a buffer of %d bytes", ErrInvalid, n, scalars.bytes)
	case bases.dev != scalars.dev:
		return fmt.Errorf("%w: msm: bases on device %d, scalars on %d", ErrInvalid, bases.dev, scalars.dev)
	}
	return nil
}

// MSMG1 computes sum scalars[i]*bases[i], i < n, on the buffers' device.
func (l *Library) MSMG1(bases, scalars *Buffer, n int) (curve.G1Jac, MSMStats, error) {
	var res curve.G1Jac
	if err := checkMSM(bases, scalars, n, g1Size); err != nil {
		return res, MSMStats{}, err
	}
	var raw [g1XYZZ]byte
	st, err := l.a.msm(bases.dev, 1, bases.p, scalars.p, int64(n), unsafe.Pointer(&raw[0]))
	if err != nil {
		return res, st, err
	}
	return g1FromXYZZ(raw[:]), st, nil
}

// MSMG2 computes sum scalars[i]*bases[i], i < n, on the buffers' device.
func (l *Library) MSMG2(bases, scalars *Buffer, n int) (curve.G2Jac, MSMStats, error) {
	var res curve.G2Jac
	if err := checkMSM(bases, scalars, n, g2Size); err != nil {
		return res, MSMStats{}, err
	}
	var raw [g2XYZZ]byte
	st, err := l.a.msm(bases.dev, 2, bases.p, scalars.p, int64(n), unsafe.Pointer(&raw[0]))
	if err != nil {
		return res, st, err
	}
	return g2FromXYZZ(raw[:]), st, nil
}

// NTT transforms the first 2^logN elements of data in place with
// gnark-crypto's fft.Domain conventions (natural order in and out; see
// c2g_ntt) and returns the device time in milliseconds.
func (l *Library) NTT(data *Buffer, logN int, inverse, coset bool) (float64, error) {
	if data == nil || data.p == nil {
		return 0, fmt.Errorf("%w: ntt: nil or freed buffer", ErrInvalid)
	}
	if logN < 0 || logN > 28 || (int64(1)<<logN)*frSize > data.bytes {
		return 0, fmt.Errorf("%w: ntt: 2^%d elements do not fit a buffer of %d bytes (max 2^28)", ErrInvalid, logN, data.bytes)
	}
	return l.a.ntt(data.dev, data.p, logN, inverse, coset)
}

// selftest runs an element-wise arithmetic op on the device (tests).
func (l *Library) selftest(dev, op int, in0, in1, out []byte, n int) error {
	if n == 0 {
		return nil
	}
	return l.a.selftest(dev, op, unsafe.Pointer(&in0[0]), unsafe.Pointer(&in1[0]), unsafe.Pointer(&out[0]), int64(n))
}

// g1FromXYZZ decodes a G1 XYZZ point (4 fp.Element, Montgomery).
func g1FromXYZZ(raw []byte) curve.G1Jac {
	var c [4]fp.Element
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), g1XYZZ), raw)
	var a curve.G1Affine
	if !c[2].IsZero() {
		var zi, zzi fp.Element
		zi.Inverse(&c[2])
		zzi.Inverse(&c[3])
		a.X.Mul(&c[0], &zi)
		a.Y.Mul(&c[1], &zzi)
	}
	var j curve.G1Jac
	j.FromAffine(&a)
	return j
}

// g2FromXYZZ decodes a G2 XYZZ point (4 E2, Montgomery).
func g2FromXYZZ(raw []byte) curve.G2Jac {
	var c [4]curve.E2
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), g2XYZZ), raw)
	var a curve.G2Affine
	if !c[2].IsZero() {
		var zi, zzi curve.E2
		zi.Inverse(&c[2])
		zzi.Inverse(&c[3])
		a.X.Mul(&c[0], &zi)
		a.Y.Mul(&c[1], &zzi)
	}
	var j curve.G2Jac
	j.FromAffine(&a)
	return j
}

func libraryDescription(b *Backend) string { return b.lib.Path() }
