//go:build cgo

package cuda

/*
#cgo CFLAGS: -I${SRCDIR}/../../../cuda/include
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "c2g.h"

// The library's entry points, resolved with dlsym. Go calls them through the
// trampolines below (cgo cannot call C function pointers directly).
typedef struct c2g_api {
	int32_t (*abi_version)(void);
	c2g_status (*device_count)(int32_t*, c2g_error*);
	c2g_status (*device_info_get)(int32_t, c2g_device_info*, c2g_error*);
	c2g_status (*buffer_alloc)(int32_t, uint64_t, c2g_buffer**, c2g_error*);
	void (*buffer_free)(c2g_buffer*);
	c2g_status (*buffer_write)(int32_t, c2g_buffer*, uint64_t, const void*, uint64_t, c2g_error*);
	c2g_status (*buffer_read)(int32_t, const c2g_buffer*, uint64_t, void*, uint64_t, c2g_error*);
	c2g_status (*buffer_fill_random_fr)(int32_t, c2g_buffer*, uint64_t, uint64_t, double, c2g_error*);
	c2g_status (*buffer_fill_random_points)(int32_t, c2g_buffer*, int32_t, uint64_t, uint64_t, c2g_error*);
	c2g_status (*buffer_copy)(int32_t, c2g_buffer*, uint64_t, const c2g_buffer*, uint64_t, uint64_t, c2g_error*);
	c2g_status (*msm)(int32_t, int32_t, const c2g_buffer*, const c2g_buffer*, uint64_t, void*, c2g_msm_stats*, c2g_error*);
	c2g_status (*fixed_base)(int32_t, int32_t, const void*, uint32_t, uint32_t, const void*, uint64_t, void*, c2g_error*);
	c2g_status (*ntt)(int32_t, c2g_buffer*, uint32_t, int32_t, int32_t, float*, c2g_error*);
	c2g_status (*selftest)(int32_t, int32_t, const void*, const void*, void*, uint64_t, c2g_error*);
	c2g_status (*key_device_bytes)(int32_t, const c2g_key_desc*, uint64_t*, c2g_error*);
	c2g_status (*key_create)(int32_t, const c2g_key_desc*, c2g_key**, c2g_error*);
	void (*key_free)(c2g_key*);
	c2g_status (*key_task_bytes)(int32_t, const c2g_key*, uint64_t, uint64_t*, c2g_error*);
	c2g_status (*task_create)(int32_t, c2g_key*, uint64_t, c2g_task**, c2g_error*);
	c2g_status (*task_upload)(int32_t, c2g_task*, const c2g_witness*, c2g_error*);
	c2g_status (*task_compute)(int32_t, c2g_task*, c2g_error*);
	c2g_status (*task_results)(int32_t, const c2g_task*, c2g_results*, c2g_error*);
	void (*task_cancel)(c2g_task*);
	void (*task_free)(c2g_task*);
	c2g_status (*host_register)(void*, uint64_t, c2g_error*);
	c2g_status (*host_unregister)(void*, c2g_error*);
	c2g_status (*subgroup_check)(int32_t, int32_t, const void*, uint64_t, int64_t*, c2g_error*);
	c2g_status (*desc_task_bytes)(int32_t, const c2g_key_desc*, int32_t, uint64_t*, c2g_error*);
	c2g_status (*dft_g1)(int32_t, void*, uint32_t, int32_t, const void*, c2g_dft_control*, c2g_dft_stats*, c2g_error*);
} c2g_api;

static const char* c2g_api_names[] = {
	"c2g_abi_version", "c2g_device_count", "c2g_device_info_get", "c2g_buffer_alloc",
	"c2g_buffer_free", "c2g_buffer_write", "c2g_buffer_read", "c2g_buffer_fill_random_fr",
	"c2g_buffer_fill_random_points", "c2g_buffer_copy", "c2g_msm", "c2g_fixed_base", "c2g_ntt", "c2g_selftest",
	"c2g_key_device_bytes", "c2g_key_create", "c2g_key_free", "c2g_key_task_bytes",
	"c2g_task_create", "c2g_task_upload", "c2g_task_compute", "c2g_task_results",
	"c2g_task_cancel", "c2g_task_free", "c2g_host_register", "c2g_host_unregister", "c2g_subgroup_check",
	"c2g_desc_task_bytes", "c2g_dft_g1",
};

// c2g_api_open loads path and resolves every entry point. On failure it
// returns NULL and writes the reason to msg.
static c2g_api* c2g_api_open(const char* path, char* msg, size_t msglen) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		snprintf(msg, msglen, "dlopen: %s", e ? e : "unknown error");
		return NULL;
	}
	size_t n = sizeof(c2g_api_names) / sizeof(c2g_api_names[0]);
	if (n * sizeof(void*) != sizeof(c2g_api)) {
		snprintf(msg, msglen, "internal: entry point table mismatch");
		dlclose(h);
		return NULL;
	}
	c2g_api* api = (c2g_api*)calloc(1, sizeof(c2g_api));
	if (api == NULL) {
		snprintf(msg, msglen, "out of memory");
		dlclose(h);
		return NULL;
	}
	void** slots = (void**)api;
	for (size_t i = 0; i < n; i++) {
		dlerror();
		slots[i] = dlsym(h, c2g_api_names[i]);
		if (slots[i] == NULL) {
			snprintf(msg, msglen, "missing symbol %s (library built from another ABI?)", c2g_api_names[i]);
			free(api);
			dlclose(h);
			return NULL;
		}
	}
	return api;
}

static int32_t t_abi_version(c2g_api* a) { return a->abi_version(); }
static c2g_status t_device_count(c2g_api* a, int32_t* n, c2g_error* e) { return a->device_count(n, e); }
static c2g_status t_device_info_get(c2g_api* a, int32_t d, c2g_device_info* o, c2g_error* e) { return a->device_info_get(d, o, e); }
static c2g_status t_buffer_alloc(c2g_api* a, int32_t d, uint64_t n, c2g_buffer** o, c2g_error* e) { return a->buffer_alloc(d, n, o, e); }
static void t_buffer_free(c2g_api* a, c2g_buffer* b) { a->buffer_free(b); }
static c2g_status t_buffer_write(c2g_api* a, int32_t d, c2g_buffer* b, uint64_t off, const void* s, uint64_t n, c2g_error* e) { return a->buffer_write(d, b, off, s, n, e); }
static c2g_status t_buffer_read(c2g_api* a, int32_t d, const c2g_buffer* b, uint64_t off, void* s, uint64_t n, c2g_error* e) { return a->buffer_read(d, b, off, s, n, e); }
static c2g_status t_buffer_fill_random_fr(c2g_api* a, int32_t d, c2g_buffer* b, uint64_t n, uint64_t seed, double f, c2g_error* e) { return a->buffer_fill_random_fr(d, b, n, seed, f, e); }
static c2g_status t_buffer_fill_random_points(c2g_api* a, int32_t d, c2g_buffer* b, int32_t g, uint64_t n, uint64_t seed, c2g_error* e) { return a->buffer_fill_random_points(d, b, g, n, seed, e); }
static c2g_status t_buffer_copy(c2g_api* a, int32_t d, c2g_buffer* dst, uint64_t doff, const c2g_buffer* src, uint64_t soff, uint64_t n, c2g_error* e) { return a->buffer_copy(d, dst, doff, src, soff, n, e); }
static c2g_status t_msm(c2g_api* a, int32_t d, int32_t g, const c2g_buffer* b, const c2g_buffer* s, uint64_t n, void* o, c2g_msm_stats* st, c2g_error* e) { return a->msm(d, g, b, s, n, o, st, e); }
static c2g_status t_fixed_base(c2g_api* a, int32_t d, int32_t g, const void* t, uint32_t c, uint32_t w, const void* s, uint64_t n, void* o, c2g_error* e) { return a->fixed_base(d, g, t, c, w, s, n, o, e); }
static c2g_status t_ntt(c2g_api* a, int32_t d, c2g_buffer* b, uint32_t l, int32_t inv, int32_t coset, float* ms, c2g_error* e) { return a->ntt(d, b, l, inv, coset, ms, e); }
static c2g_status t_selftest(c2g_api* a, int32_t d, int32_t op, const void* i0, const void* i1, void* o, uint64_t n, c2g_error* e) { return a->selftest(d, op, i0, i1, o, n, e); }
static c2g_status t_key_device_bytes(c2g_api* a, int32_t d, const c2g_key_desc* k, uint64_t* o, c2g_error* e) { return a->key_device_bytes(d, k, o, e); }
static c2g_status t_key_create(c2g_api* a, int32_t d, const c2g_key_desc* k, c2g_key** o, c2g_error* e) { return a->key_create(d, k, o, e); }
static void t_key_free(c2g_api* a, c2g_key* k) { a->key_free(k); }
static c2g_status t_task_create(c2g_api* a, int32_t d, c2g_key* k, uint64_t rows, c2g_task** o, c2g_error* e) { return a->task_create(d, k, rows, o, e); }
static c2g_status t_desc_task_bytes(c2g_api* a, int32_t d, const c2g_key_desc* k, int32_t ov, uint64_t* o, c2g_error* e) { return a->desc_task_bytes(d, k, ov, o, e); }
static c2g_status t_key_task_bytes(c2g_api* a, int32_t d, const c2g_key* k, uint64_t rows, uint64_t* o, c2g_error* e) { return a->key_task_bytes(d, k, rows, o, e); }
static c2g_status t_task_upload(c2g_api* a, int32_t d, c2g_task* t, const c2g_witness* w, c2g_error* e) { return a->task_upload(d, t, w, e); }
static c2g_status t_task_compute(c2g_api* a, int32_t d, c2g_task* t, c2g_error* e) { return a->task_compute(d, t, e); }
static c2g_status t_task_results(c2g_api* a, int32_t d, const c2g_task* t, c2g_results* o, c2g_error* e) { return a->task_results(d, t, o, e); }
static void t_task_cancel(c2g_api* a, c2g_task* t) { a->task_cancel(t); }
static void t_task_free(c2g_api* a, c2g_task* t) { a->task_free(t); }
static c2g_status t_host_register(c2g_api* a, void* p, uint64_t n, c2g_error* e) { return a->host_register(p, n, e); }
static c2g_status t_host_unregister(c2g_api* a, void* p, c2g_error* e) { return a->host_unregister(p, e); }
static c2g_status t_dft_g1(c2g_api* a, int32_t d, void* p, uint32_t l, int32_t inv, const void* sc, c2g_dft_control* c, c2g_dft_stats* s, c2g_error* e) { return a->dft_g1(d, p, l, inv, sc, c, s, e); }
static c2g_dft_control* c2g_dft_control_new(void) { return (c2g_dft_control*)calloc(1, sizeof(c2g_dft_control)); }
static void c2g_dft_control_free(c2g_dft_control* c) { free(c); }
static c2g_status t_subgroup_check(c2g_api* a, int32_t d, int32_t g, const void* p, uint64_t n, int64_t* bad, c2g_error* e) { return a->subgroup_check(d, g, p, n, bad, e); }

// The host build of the arithmetic (tests only).
typedef int (*c2g_host_selftest_fn)(int, const void*, const void*, void*, uint64_t);
typedef int (*c2g_host_digits_fn)(const uint32_t*, uint32_t, int32_t*);
typedef uint64_t (*c2g_host_popcount_fn)(const uint64_t*, uint64_t);
static void* c2g_hostarith_open(const char* path, char* msg, size_t msglen) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		snprintf(msg, msglen, "dlopen: %s", e ? e : "unknown error");
	}
	return h;
}
static void* c2g_hostarith_sym(void* h, const char* name) { return dlsym(h, name); }
static int t_host_selftest(void* f, int op, const void* a, const void* b, void* o, uint64_t n) {
	return ((c2g_host_selftest_fn)f)(op, a, b, o, n);
}
static int t_host_digits(void* f, const uint32_t* s, uint32_t c, int32_t* out) {
	return ((c2g_host_digits_fn)f)(s, c, out);
}
static uint64_t t_host_popcount(void* f, const uint64_t* w, uint64_t nbits) {
	return ((c2g_host_popcount_fn)f)(w, nbits);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// cgoAvailable reports whether this build can load the library.
const cgoAvailable = true

// api is a loaded library.
type api struct {
	path string
	p    *C.c2g_api
}

func openAPI(path string) (*api, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	p := C.c2g_api_open(cpath, &msg[0], C.size_t(len(msg)))
	if p == nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrLibrary, path, C.GoString(&msg[0]))
	}
	a := &api{path: path, p: p}
	if v := int(C.t_abi_version(p)); v != int(C.C2G_ABI_VERSION) {
		return nil, fmt.Errorf("%w: %s: ABI version %d, this binding needs %d", ErrLibrary, path, v, int(C.C2G_ABI_VERSION))
	}
	return a, nil
}

// cerr is a c2g_error the library fills.
type cerr struct{ e C.c2g_error }

// check turns a status into a Go error naming op and device.
func (c *cerr) check(st C.c2g_status, op string, device int) error {
	if st == C.C2G_OK {
		return nil
	}
	msg := C.GoString(&c.e.message[0])
	return newDeviceError(op, device, int(st), int(c.e.cuda_code), msg)
}

// lockedCall runs f on a locked OS thread: the library binds the device
// per call, and pinning the goroutine keeps the CUDA runtime's per-thread
// state (current device, last error) with the call that set it.
func lockedCall(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f()
}

func (a *api) deviceCount() (int, error) {
	var n C.int32_t
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_device_count(a.p, &n, &e.e) })
	if err := e.check(st, "device count", -1); err != nil {
		return 0, err
	}
	return int(n), nil
}

func (a *api) deviceInfo(dev int) (DeviceInfo, error) {
	var info C.c2g_device_info
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_device_info_get(a.p, C.int32_t(dev), &info, &e.e) })
	if err := e.check(st, "device info", dev); err != nil {
		return DeviceInfo{}, err
	}
	return DeviceInfo{
		Index:      dev,
		Name:       C.GoString(&info.name[0]),
		TotalBytes: int64(info.total_bytes),
		FreeBytes:  int64(info.free_bytes),
		SMs:        int(info.sm_count),
		CCMajor:    int(info.cc_major),
		CCMinor:    int(info.cc_minor),
	}, nil
}

type cBuffer = *C.c2g_buffer

func (a *api) bufferAlloc(dev int, bytes int64) (cBuffer, error) {
	var b *C.c2g_buffer
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_buffer_alloc(a.p, C.int32_t(dev), C.uint64_t(bytes), &b, &e.e) })
	if err := e.check(st, "buffer alloc", dev); err != nil {
		return nil, err
	}
	return b, nil
}

func (a *api) bufferFree(b cBuffer) { lockedCall(func() { C.t_buffer_free(a.p, b) }) }

func (a *api) bufferWrite(dev int, b cBuffer, off int64, src unsafe.Pointer, n int64) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_buffer_write(a.p, C.int32_t(dev), b, C.uint64_t(off), src, C.uint64_t(n), &e.e) })
	return e.check(st, "buffer write", dev)
}

func (a *api) bufferRead(dev int, b cBuffer, off int64, dst unsafe.Pointer, n int64) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_buffer_read(a.p, C.int32_t(dev), b, C.uint64_t(off), dst, C.uint64_t(n), &e.e) })
	return e.check(st, "buffer read", dev)
}

func (a *api) bufferCopy(dev int, dst cBuffer, doff int64, src cBuffer, soff, n int64) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() {
		st = C.t_buffer_copy(a.p, C.int32_t(dev), dst, C.uint64_t(doff), src, C.uint64_t(soff), C.uint64_t(n), &e.e)
	})
	return e.check(st, "buffer copy", dev)
}

func (a *api) fillRandomFr(dev int, b cBuffer, n int64, seed uint64, frac01 float64) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() {
		st = C.t_buffer_fill_random_fr(a.p, C.int32_t(dev), b, C.uint64_t(n), C.uint64_t(seed), C.double(frac01), &e.e)
	})
	return e.check(st, "random scalars", dev)
}

func (a *api) fillRandomPoints(dev int, b cBuffer, group int, n int64, seed uint64) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() {
		st = C.t_buffer_fill_random_points(a.p, C.int32_t(dev), b, C.int32_t(group), C.uint64_t(n), C.uint64_t(seed), &e.e)
	})
	return e.check(st, "random points", dev)
}

func (a *api) msm(dev, group int, bases, scalars cBuffer, n int64, out unsafe.Pointer) (MSMStats, error) {
	var e cerr
	var st C.c2g_status
	var s C.c2g_msm_stats
	lockedCall(func() {
		st = C.t_msm(a.p, C.int32_t(dev), C.int32_t(group), bases, scalars, C.uint64_t(n), out, &s, &e.e)
	})
	if err := e.check(st, "msm", dev); err != nil {
		return MSMStats{}, err
	}
	return MSMStats{Zero: int64(s.n_zero), One: int64(s.n_one), MinusOne: int64(s.n_minus_one), Other: int64(s.n_other),
		WindowBits: int(s.window_bits), BatchAffine: s.batch_affine != 0, Split: s.split != 0,
		DeviceMillis: float64(s.ms)}, nil
}

// fixedBase passes Go memory (table, scalars, out), pinned for the call.
func (a *api) fixedBase(dev, group int, table unsafe.Pointer, c, windows int, scalars unsafe.Pointer, n int64, out unsafe.Pointer) error {
	var pin runtime.Pinner
	pin.Pin(table)
	pin.Pin(scalars)
	pin.Pin(out)
	defer pin.Unpin()
	var e cerr
	var st C.c2g_status
	lockedCall(func() {
		st = C.t_fixed_base(a.p, C.int32_t(dev), C.int32_t(group), table, C.uint32_t(c), C.uint32_t(windows), scalars,
			C.uint64_t(n), out, &e.e)
	})
	return e.check(st, "fixed base", dev)
}

// subgroupCheck passes Go memory (n > 0 points), pinned for the call.
func (a *api) subgroupCheck(dev, group int, points unsafe.Pointer, n int64) (int64, error) {
	var pin runtime.Pinner
	pin.Pin(points)
	defer pin.Unpin()
	var e cerr
	var st C.c2g_status
	var bad C.int64_t
	lockedCall(func() {
		st = C.t_subgroup_check(a.p, C.int32_t(dev), C.int32_t(group), points, C.uint64_t(n), &bad, &e.e)
	})
	if err := e.check(st, "subgroup check", dev); err != nil {
		return 0, err
	}
	return int64(bad), nil
}

// dftG1 transforms n = 2^logN points of Go memory in place (pinned for the
// call), their input first scaled when scale is not nil (two fr.Elements,
// pinned too); ctl is C memory that another goroutine may write (cancel)
// and read (done, total) during the call.
func (a *api) dftG1(dev int, points unsafe.Pointer, logN int, inverse bool, scale unsafe.Pointer, ctl *dftControl) (DFTStats, error) {
	var pin runtime.Pinner
	pin.Pin(points)
	if scale != nil {
		pin.Pin(scale)
	}
	defer pin.Unpin()
	var e cerr
	var st C.c2g_status
	var s C.c2g_dft_stats
	lockedCall(func() {
		st = C.t_dft_g1(a.p, C.int32_t(dev), points, C.uint32_t(logN), cbool(inverse), scale, ctl.c, &s, &e.e)
	})
	if err := e.check(st, "dft", dev); err != nil {
		return DFTStats{}, err
	}
	return DFTStats{DeviceMillis: float64(s.ms_stages), Millis: float64(s.ms), ScalarMuls: int64(s.scalar_muls),
		ScaleMuls: int64(s.scale_muls), WindowBits: int(s.window_bits), AffineTable: s.affine_table != 0}, nil
}

// dftControl is a c2g_dft_control in C memory: the library reads cancel and
// writes done and total while the call runs, so Go touches its fields only
// atomically.
type dftControl struct{ c *C.c2g_dft_control }

func newDFTControl() *dftControl { return &dftControl{c: C.c2g_dft_control_new()} }

func (c *dftControl) free() { C.c2g_dft_control_free(c.c) }

func (c *dftControl) cancel() { atomic.StoreInt32((*int32)(unsafe.Pointer(&c.c.cancel)), 1) }

func (c *dftControl) progress() (done, total int64) {
	return int64(atomic.LoadUint64((*uint64)(unsafe.Pointer(&c.c.done)))),
		int64(atomic.LoadUint64((*uint64)(unsafe.Pointer(&c.c.total))))
}

func (a *api) ntt(dev int, b cBuffer, logN int, inverse, coset bool) (float64, error) {
	var e cerr
	var st C.c2g_status
	var ms C.float
	lockedCall(func() {
		st = C.t_ntt(a.p, C.int32_t(dev), b, C.uint32_t(logN), cbool(inverse), cbool(coset), &ms, &e.e)
	})
	if err := e.check(st, "ntt", dev); err != nil {
		return 0, err
	}
	return float64(ms), nil
}

func cbool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

func (a *api) selftest(dev, op int, in0, in1, out unsafe.Pointer, n int64) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_selftest(a.p, C.int32_t(dev), C.int32_t(op), in0, in1, out, C.uint64_t(n), &e.e) })
	return e.check(st, "selftest", dev)
}

// keyDesc mirrors c2g_key_desc with Go-side pointers.
type keyDesc struct {
	domain, inputs, aux, numA, numB  int64
	h, l, a, bg1, bg2                unsafe.Pointer
	hBuf, lBuf, aBuf, bg1Buf, bg2Buf cBuffer
	residency                        int
	streamChunk                      int64
	hForm                            int32 // C2G_H_*
}

func (d *keyDesc) c() C.c2g_key_desc {
	return C.c2g_key_desc{
		domain: C.uint64_t(d.domain), num_inputs: C.uint64_t(d.inputs), num_aux: C.uint64_t(d.aux),
		num_a: C.uint64_t(d.numA), num_b: C.uint64_t(d.numB),
		h: d.h, l: d.l, a: d.a, b_g1: d.bg1, b_g2: d.bg2,
		h_buf: d.hBuf, l_buf: d.lBuf, a_buf: d.aBuf, b_g1_buf: d.bg1Buf, b_g2_buf: d.bg2Buf,
		residency: C.int32_t(d.residency), stream_chunk: C.uint64_t(d.streamChunk),
		h_form: C.int32_t(d.hForm),
	}
}

type cKey = *C.c2g_key
type cTask = *C.c2g_task

func (a *api) keyDeviceBytes(dev int, d *keyDesc) (int64, error) {
	cd := d.c()
	var n C.uint64_t
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_key_device_bytes(a.p, C.int32_t(dev), &cd, &n, &e.e) })
	if err := e.check(st, "key device bytes", dev); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// descTaskBytes is the device memory one task of a key made from d would
// take, its MSMs in order or overlapped (host-only, nothing allocated).
func (a *api) descTaskBytes(dev int, d *keyDesc, overlap bool) (int64, error) {
	cd := d.c()
	ov := C.int32_t(0)
	if overlap {
		ov = 1
	}
	var n C.uint64_t
	var e cerr
	st := C.t_desc_task_bytes(a.p, C.int32_t(dev), &cd, ov, &n, &e.e)
	if err := e.check(st, "task bytes", dev); err != nil {
		return 0, err
	}
	return int64(n), nil
}

func (a *api) keyCreate(dev int, d *keyDesc) (cKey, error) {
	cd := d.c()
	var k *C.c2g_key
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_key_create(a.p, C.int32_t(dev), &cd, &k, &e.e) })
	if err := e.check(st, "load key", dev); err != nil {
		return nil, err
	}
	return k, nil
}

func (a *api) keyFree(k cKey) { lockedCall(func() { C.t_key_free(a.p, k) }) }

// keyTaskBytes is a host-only computation (no device access).
func (a *api) keyTaskBytes(dev int, k cKey, rows int64) (int64, error) {
	var n C.uint64_t
	var e cerr
	st := C.t_key_task_bytes(a.p, C.int32_t(dev), k, C.uint64_t(rows), &n, &e.e)
	if err := e.check(st, "task bytes", dev); err != nil {
		return 0, err
	}
	return int64(n), nil
}

func (a *api) taskCreate(dev int, k cKey, rows int64) (cTask, error) {
	var t *C.c2g_task
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_task_create(a.p, C.int32_t(dev), k, C.uint64_t(rows), &t, &e.e) })
	if err := e.check(st, "create task", dev); err != nil {
		return nil, err
	}
	return t, nil
}

// witnessPtrs are the host arrays of one upload; they are only read during
// the call.
type witnessPtrs struct {
	a, b, c, input, aux              unsafe.Pointer
	aDensAux, bDensIn, bDensAux      unsafe.Pointer // []uint64 words
	aCodes, bCodes, cCodes, auxCodes unsafe.Pointer // []uint8 value codes, or nil
}

func (a *api) taskUpload(dev int, t cTask, w *witnessPtrs) error {
	cw := C.c2g_witness{
		a: w.a, b: w.b, c: w.c, input: w.input, aux: w.aux,
		a_density_aux:   (*C.uint64_t)(w.aDensAux),
		b_density_input: (*C.uint64_t)(w.bDensIn),
		b_density_aux:   (*C.uint64_t)(w.bDensAux),
		a_codes:         (*C.uint8_t)(w.aCodes),
		b_codes:         (*C.uint8_t)(w.bCodes),
		c_codes:         (*C.uint8_t)(w.cCodes),
		aux_codes:       (*C.uint8_t)(w.auxCodes),
	}
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_task_upload(a.p, C.int32_t(dev), t, &cw, &e.e) })
	return e.check(st, "upload", dev)
}

func (a *api) taskCompute(dev int, t cTask) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_task_compute(a.p, C.int32_t(dev), t, &e.e) })
	return e.check(st, "compute", dev)
}

// taskResults copies the MSM sums out as raw XYZZ bytes plus device timings.
func (a *api) taskResults(dev int, t cTask) (*rawResults, error) {
	var r C.c2g_results
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_task_results(a.p, C.int32_t(dev), t, &r, &e.e) })
	if err := e.check(st, "results", dev); err != nil {
		return nil, err
	}
	out := &rawResults{}
	copy(out.h[:], C.GoBytes(unsafe.Pointer(&r.h[0]), 192))
	copy(out.l[:], C.GoBytes(unsafe.Pointer(&r.l[0]), 192))
	copy(out.a[:], C.GoBytes(unsafe.Pointer(&r.a[0]), 192))
	copy(out.bg1[:], C.GoBytes(unsafe.Pointer(&r.b_g1[0]), 192))
	copy(out.bg2[:], C.GoBytes(unsafe.Pointer(&r.b_g2[0]), 384))
	out.directBytes, out.stagedBytes = int64(r.upload_direct_bytes), int64(r.upload_staged_bytes)
	out.codedBytes, out.otherValues = int64(r.upload_coded_bytes), int64(r.upload_other_values)
	out.overlapped = r.msms_overlapped != 0
	out.hSplitBits = int(r.msm_h_split_bits)
	out.ms = [8]float64{float64(r.ms_upload), float64(r.ms_h), float64(r.ms_msm_h), float64(r.ms_msm_l),
		float64(r.ms_msm_a), float64(r.ms_msm_b_g1), float64(r.ms_msm_b_g2), float64(r.ms_compute)}
	return out, nil
}

// hostRegister page-locks [p, p+n) and records it in the library (p must
// stay valid, and pinned if it is Go memory, until hostUnregister).
func (a *api) hostRegister(p unsafe.Pointer, n int64) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_host_register(a.p, p, C.uint64_t(n), &e.e) })
	return e.check(st, "host register", -1)
}

func (a *api) hostUnregister(p unsafe.Pointer) error {
	var e cerr
	var st C.c2g_status
	lockedCall(func() { st = C.t_host_unregister(a.p, p, &e.e) })
	return e.check(st, "host unregister", -1)
}

func (a *api) taskCancel(t cTask) { C.t_task_cancel(a.p, t) }
func (a *api) taskFree(t cTask)   { lockedCall(func() { C.t_task_free(a.p, t) }) }

// hostArith is the host build of the arithmetic (tests).
type hostArith struct{ selftest, digits, popcount unsafe.Pointer }

func openHostArith(path string) (*hostArith, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	h := C.c2g_hostarith_open(cpath, &msg[0], C.size_t(len(msg)))
	if h == nil {
		return nil, errors.New(C.GoString(&msg[0]))
	}
	ha := &hostArith{}
	for _, s := range []struct {
		name string
		p    *unsafe.Pointer
	}{{"c2g_host_selftest", &ha.selftest}, {"c2g_host_digits", &ha.digits}, {"c2g_host_popcount", &ha.popcount}} {
		cn := C.CString(s.name)
		*s.p = C.c2g_hostarith_sym(h, cn)
		C.free(unsafe.Pointer(cn))
		if *s.p == nil {
			return nil, fmt.Errorf("%s: missing symbol %s", path, s.name)
		}
	}
	return ha, nil
}

func (h *hostArith) run(op int, in0, in1, out unsafe.Pointer, n int64) error {
	if rc := C.t_host_selftest(h.selftest, C.int(op), in0, in1, out, C.uint64_t(n)); rc != 0 {
		return fmt.Errorf("host selftest: op %d: code %d", op, int(rc))
	}
	return nil
}

// countBits returns the upload's count (bits.cuh) of the first nbits of w.
func (h *hostArith) countBits(w []uint64, nbits uint64) uint64 {
	var p *C.uint64_t
	if len(w) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&w[0]))
	}
	return uint64(C.t_host_popcount(h.popcount, p, C.uint64_t(nbits)))
}

// signedDigits returns the signed window digits of a canonical scalar.
func (h *hostArith) signedDigits(scalar *[8]uint32, c int) ([]int32, error) {
	out := make([]int32, (256+c-1)/c)
	if rc := C.t_host_digits(h.digits, (*C.uint32_t)(unsafe.Pointer(&scalar[0])), C.uint32_t(c),
		(*C.int32_t)(unsafe.Pointer(&out[0]))); rc != 0 {
		if rc == 2 {
			return nil, fmt.Errorf("host digits: c = %d: a digit differs from the carry chain's", c)
		}
		return nil, fmt.Errorf("host digits: c = %d: code %d", c, int(rc))
	}
	return out, nil
}
