package telemetry

import (
	"log/slog"
	"sort"
	"sync"
	"time"
)

// Dependency names of DependencyUp and Dependencies.
const (
	DepRedis = "redis"
	DepNATS  = "nats"
)

// Dependencies tracks whether a process reaches each of its dependencies.
// Set logs a change of state once (a warning when a dependency goes down, an
// info record with the outage's length when it is back), never once per
// failed attempt, and mirrors it in the c2_dependency_up gauge. It is safe
// for concurrent use.
type Dependencies struct {
	m   *Metrics
	log *slog.Logger

	mu    sync.Mutex
	down  map[string]time.Time // dependency → when it went down
	cause map[string]string
}

// NewDependencies tracks deps, all up at first, on m's gauge, logging to
// log.
func NewDependencies(m *Metrics, log *slog.Logger, deps ...string) *Dependencies {
	d := &Dependencies{m: m, log: log, down: map[string]time.Time{}, cause: map[string]string{}}
	for _, name := range deps {
		m.DependencyUp.WithLabelValues(name).Set(1)
	}
	return d
}

// Set records whether dep is reachable; err is why not. what says what
// the process does meanwhile ("holding the partition until it returns").
func (d *Dependencies) Set(dep string, up bool, err error, what string) {
	d.mu.Lock()
	since, wasDown := d.down[dep]
	switch {
	case up && wasDown:
		delete(d.down, dep)
		delete(d.cause, dep)
	case !up && !wasDown:
		d.down[dep] = time.Now()
		if err != nil {
			d.cause[dep] = err.Error()
		}
	}
	d.mu.Unlock()
	switch {
	case up && wasDown:
		d.m.DependencyUp.WithLabelValues(dep).Set(1)
		d.log.Info(dep+" is reachable again; resuming", slog.String("dependency", dep),
			slog.Duration("outage", time.Since(since).Round(time.Millisecond)))
	case !up && !wasDown:
		d.m.DependencyUp.WithLabelValues(dep).Set(0)
		d.log.Warn(dep+" is unreachable; "+what, slog.String("dependency", dep), slog.Any("err", err))
	}
}

// Up reports whether dep is reachable as last Set.
func (d *Dependencies) Up(dep string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, down := d.down[dep]
	return !down
}

// Down lists the unreachable dependencies, sorted, each with its error
// ("redis: dial tcp …: connection refused").
func (d *Dependencies) Down() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.down))
	for dep := range d.down {
		s := dep
		if c := d.cause[dep]; c != "" {
			s += ": " + c
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
