package groth16

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress receives progress of long operations (setup, reading and writing
// parameters): the stage name, the units done so far and the total for that
// stage. It may be called from several goroutines, but calls are serialized.
// done == total marks the end of a stage.
type Progress func(stage string, done, total int64)

// ProgressLines returns a Progress that writes one line per stage start, per
// further tenth of the stage and per stage end to w, with the elapsed time:
//
//	setup: g1 fixed-base 40% (419430/1048576) 3.2s
func ProgressLines(w io.Writer) Progress {
	start := time.Now()
	var mu sync.Mutex
	last := map[string]int64{}
	return func(stage string, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		tenth := int64(0)
		if total > 0 {
			tenth = done * 10 / total
		}
		if prev, ok := last[stage]; ok && tenth == prev && done != total {
			return
		}
		last[stage] = tenth
		pct := int64(100)
		if total > 0 {
			pct = done * 100 / total
		}
		fmt.Fprintf(w, "%s %d%% (%d/%d) %s\n", stage, pct, done, total, time.Since(start).Round(time.Millisecond))
	}
}

// progressReporter serializes calls to a Progress and accumulates counts from
// concurrent workers.
type progressReporter struct {
	mu    sync.Mutex
	fn    Progress
	stage string
	done  int64
	total int64
}

func newProgressReporter(fn Progress, stage string, total int64) *progressReporter {
	r := &progressReporter{fn: fn, stage: stage, total: total}
	if fn != nil {
		fn(stage, 0, total)
	}
	return r
}

func (r *progressReporter) add(n int64) {
	if r == nil || r.fn == nil {
		return
	}
	r.mu.Lock()
	r.done += n
	r.fn(r.stage, r.done, r.total)
	r.mu.Unlock()
}
