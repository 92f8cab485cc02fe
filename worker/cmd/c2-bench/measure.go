package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procStatus reads fields (in kB) of /proc/self/status, as bytes.
func procStatus(fields ...string) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		for _, f := range fields {
			if rest, ok := strings.CutPrefix(line, f+":"); ok {
				v := strings.Fields(rest)
				if len(v) > 0 {
					if n, err := strconv.ParseInt(v[0], 10, 64); err == nil {
						out[f] = n << 10
					}
				}
			}
		}
	}
	return out
}

// resetHWM resets the kernel's peak-RSS mark (VmHWM) of this process to its
// current RSS (Linux ≥ 4.0: "5" to /proc/self/clear_refs). false when the
// kernel refused: VmHWM is then the peak since the process started.
func resetHWM() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// vramProbe reports one device's memory in use (total − free, device-wide:
// cudaMemGetInfo through the library); nil where there is no GPU to ask.
type vramProbe func(dev int) (used int64, err error)

// Peaks are the maxima seen since the last Reset.
type Peaks struct {
	// RSSHWM is the kernel's peak RSS (VmHWM) since the reset; when the
	// reset was refused, since the process started (HWMReset false).
	RSSHWM   int64 `json:"rss_hwm_bytes"`
	HWMReset bool  `json:"rss_hwm_reset"`
	// RSSSampled and Heap are the largest VmRSS and Go heap (live and not
	// yet collected objects) seen by the sampler (every 50 ms).
	RSSSampled int64 `json:"rss_sampled_peak_bytes"`
	Heap       int64 `json:"heap_peak_bytes"`
	// HeapLive is the largest live heap the GC marked (what the process
	// needed; RSS adds the garbage not yet collected, up to the Go memory
	// limit).
	HeapLive int64 `json:"heap_live_peak_bytes"`
	// VRAMUsed is the largest device memory in use (total − free,
	// cudaMemGetInfo, sampled every 250 ms) per device; nil without a GPU.
	VRAMUsed map[int]int64 `json:"vram_used_peak_bytes,omitempty"`
}

// sampler watches the process's memory (and the GPUs') in the background
// and keeps the peaks since the last Reset.
type sampler struct {
	vram    vramProbe
	devices []int

	mu      sync.Mutex
	peaks   Peaks
	vramErr error
	stop    chan struct{}
	done    chan struct{}
}

func newSampler() *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.peaks.HWMReset = resetHWM()
	go s.loop()
	return s
}

// watchVRAM adds the devices' memory to the samples.
func (s *sampler) watchVRAM(probe vramProbe, devices []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vram, s.devices = probe, append([]int(nil), devices...)
	s.peaks.VRAMUsed = map[int]int64{}
}

func (s *sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		s.sample(i%5 == 0)
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

func (s *sampler) sample(vram bool) {
	st := procStatus("VmRSS")
	ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(ms)
	var heap, live int64
	if ms[0].Value.Kind() == metrics.KindUint64 {
		heap = int64(ms[0].Value.Uint64())
	}
	if ms[1].Value.Kind() == metrics.KindUint64 {
		live = int64(ms[1].Value.Uint64())
	}
	s.mu.Lock()
	probe, devices := s.vram, s.devices
	s.mu.Unlock()
	used := map[int]int64{}
	var verr error
	if vram && probe != nil {
		for _, d := range devices {
			u, err := probe(d)
			if err != nil {
				verr = err
				continue
			}
			used[d] = u
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peaks.RSSSampled = max(s.peaks.RSSSampled, st["VmRSS"])
	s.peaks.Heap = max(s.peaks.Heap, heap)
	s.peaks.HeapLive = max(s.peaks.HeapLive, live)
	for d, u := range used {
		s.peaks.VRAMUsed[d] = max(s.peaks.VRAMUsed[d], u)
	}
	if verr != nil {
		s.vramErr = verr
	}
}

// Reset starts a new measurement window.
func (s *sampler) Reset() {
	ok := resetHWM()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peaks = Peaks{HWMReset: ok}
	if s.vram != nil {
		s.peaks.VRAMUsed = map[int]int64{}
	}
}

// Peaks samples once more and returns the peaks since the last Reset.
func (s *sampler) Peaks() Peaks {
	s.sample(true)
	hwm := procStatus("VmHWM")["VmHWM"]
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peaks
	p.RSSHWM = hwm
	if p.VRAMUsed != nil {
		m := make(map[int]int64, len(p.VRAMUsed))
		for d, u := range p.VRAMUsed {
			m[d] = u
		}
		p.VRAMUsed = m
	}
	return p
}

// VRAMError is the last error of the VRAM probe (nil: none).
func (s *sampler) VRAMError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vramErr
}

func (s *sampler) Close() {
	close(s.stop)
	<-s.done
}
