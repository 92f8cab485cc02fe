package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	"github.com/c2cluster/c2cluster/pkg/telemetry"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Defaults of WatchdogConfig.
const (
	WatchdogIntervalDefault = 30 * time.Second
	DependencyPollDefault   = time.Second
)

// WatchdogConfig tunes the watchdog: the periodic reconciliation of open
// jobs with the stream and the store. Zero values mean the defaults.
type WatchdogConfig struct {
	// Interval between passes. Default 30 s. A negative value turns the
	// watchdog off.
	Interval time.Duration
	// Grace is how long a partition must be seen without a task in the
	// stream and without a proof (on two passes at least Grace apart)
	// before it is published again. Default Interval.
	Grace time.Duration
	// DependencyPoll is how often the coordinator checks that Redis and
	// NATS answer (c2_dependency_up, /healthz, one log line per change).
	// Default 1 s.
	DependencyPoll time.Duration
}

func (c WatchdogConfig) withDefaults() WatchdogConfig {
	if c.Interval == 0 {
		c.Interval = WatchdogIntervalDefault
	}
	if c.Grace <= 0 {
		c.Grace = max(c.Interval, time.Second)
	}
	if c.DependencyPoll <= 0 {
		c.DependencyPoll = DependencyPollDefault
	}
	return c
}

// watchdogState is what one coordinator's watchdog remembers between
// passes: when each partition was first seen lost.
type watchdogState struct {
	once   sync.Once
	deps   *telemetry.Dependencies
	holder string // this coordinator's name on the watchdog lease
	mu     sync.Mutex
	lost   map[string]time.Time // "<job>.<partition>" → first seen lost
}

// dependencies is the tracker of Redis and NATS reachability, made on
// first use.
func (s *Server) dependencies() *telemetry.Dependencies {
	s.wd.once.Do(func() {
		jobstore.QuietClientLog()
		s.wd.deps = telemetry.NewDependencies(s.cfg.Metrics, s.log, telemetry.DepRedis, telemetry.DepNATS)
		s.wd.holder = newHolder()
		s.wd.lost = map[string]time.Time{}
	})
	return s.wd.deps
}

func newHolder() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b)
}

// checkDependencies asks Redis and NATS whether they answer and records the
// answers (log once per change, c2_dependency_up).
func (s *Server) checkDependencies(ctx context.Context) []string {
	var rerr, nerr error
	var wg sync.WaitGroup
	wg.Go(func() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		rerr = s.store.Client().Ping(cctx).Err()
	})
	wg.Go(func() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		nerr = s.q.Reachable(cctx)
	})
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	what := "pausing: requests that need it answer Unavailable, queue work waits"
	s.dependencies().Set(telemetry.DepRedis, rerr == nil, rerr, what)
	s.dependencies().Set(telemetry.DepNATS, nerr == nil, nerr, what)
	return s.dependencies().Down()
}

// healthz answers 200 "ok" while Redis and NATS answer, else 503 naming
// each dependency that does not.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if down := s.checkDependencies(r.Context()); len(down) > 0 {
		http.Error(w, "unavailable: "+strings.Join(down, "; "), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// runDependencies checks the dependencies every DependencyPoll until ctx
// ends.
func (s *Server) runDependencies(ctx context.Context) {
	t := time.NewTicker(s.cfg.Watchdog.DependencyPoll)
	defer t.Stop()
	for {
		s.checkDependencies(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runWatchdog runs a watchdog pass every Interval until ctx ends, on the
// one coordinator that holds the "watchdog" lease in Redis (a lease of 3
// intervals, renewed each pass: when its holder dies another coordinator
// takes over).
func (s *Server) runWatchdog(ctx context.Context) {
	if s.cfg.Watchdog.Interval < 0 {
		return
	}
	t := time.NewTicker(s.cfg.Watchdog.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.dependencies().Up(telemetry.DepRedis) || !s.dependencies().Up(telemetry.DepNATS) {
			continue // nothing can be told lost during an outage
		}
		err := s.watchdogPass(ctx)
		if err != nil && ctx.Err() == nil && len(s.checkDependencies(ctx)) == 0 {
			// Not an outage (those are logged once, by checkDependencies).
			s.log.Warn("coordinator: watchdog pass", slog.Any("err", err))
		}
	}
}

// watchdogPass reconciles the open jobs with the stream and the store: a
// half-published job (its coordinator died while publishing) is published
// again (deduplicated by the stream); an unproved partition whose task is
// no longer in the stream (expired by MaxAge, purged by an operator, acked
// while its result was lost) is published again as a new task once it has
// been seen lost for Grace.
func (s *Server) watchdogPass(ctx context.Context) error {
	wd := s.cfg.Watchdog
	s.dependencies()
	mine, err := s.store.Lease(ctx, "watchdog", s.wd.holder, 3*wd.Interval)
	if err != nil || !mine {
		return err
	}
	jobs, err := s.store.List(ctx, "", ReconcileLimit)
	if err != nil {
		return err
	}
	now := time.Now()
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.State == jobstore.StateAssembling && now.Sub(j.Updated) >= wd.Grace {
			// Its assembly request is lost, or was taken for a duplicate
			// of a forged one with the same message id: ask again, once
			// per state change (the key is the job's last update).
			sent, err := s.q.RequestAssemblyAgain(ctx, j.ID, strconv.FormatInt(j.Updated.UnixMilli(), 10))
			if err != nil {
				return err
			}
			if !sent {
				continue
			}
			s.cfg.Metrics.RepairsTotal.WithLabelValues("assembly").Inc()
			s.log.Info("coordinator: watchdog: assembly requested again", telemetry.LogJob(j.ID),
				slog.Duration("assembling_for", now.Sub(j.Updated).Round(time.Second)))
			continue
		}
		if j.State != jobstore.StateQueued && j.State != jobstore.StateProving {
			continue
		}
		if j.Published < j.Partitions {
			if now.Sub(j.Updated) >= wd.Grace {
				s.log.Info("coordinator: watchdog: republishing a half-submitted job", telemetry.LogJob(j.ID))
				if err := s.publish(telemetry.ContextWithTraceParent(ctx, j.TraceParent), j); err != nil {
					return fmt.Errorf("republish %s: %w", j.ID, err)
				}
			}
			continue
		}
		proofs, err := s.store.Proofs(ctx, j.ID, j.Partitions)
		if err != nil {
			return err
		}
		seqs, err := s.store.PartitionSeqs(ctx, j.ID)
		if err != nil {
			return err
		}
		for p, proof := range proofs {
			if proof != nil {
				continue
			}
			if seq, ok := seqs[uint32(p)]; ok {
				present, err := s.q.HasTask(ctx, seq)
				if err != nil {
					return err
				}
				if present {
					continue
				}
			}
			key := queueMsgID(j.ID, p)
			seen[key] = true
			s.wd.mu.Lock()
			first, known := s.wd.lost[key]
			if !known {
				s.wd.lost[key] = now
			}
			s.wd.mu.Unlock()
			if !known || now.Sub(first) < wd.Grace {
				continue
			}
			if err := s.republish(ctx, j, uint32(p), now); err != nil {
				return err
			}
			s.wd.mu.Lock()
			delete(s.wd.lost, key)
			s.wd.mu.Unlock()
		}
	}
	s.wd.mu.Lock()
	for key := range s.wd.lost {
		if !seen[key] {
			delete(s.wd.lost, key)
		}
	}
	s.wd.mu.Unlock()
	return nil
}

func queueMsgID(job string, p int) string { return job + "." + strconv.Itoa(p) }

// republish publishes partition p of j again as a new task.
func (s *Server) republish(ctx context.Context, j *jobstore.Job, p uint32, now time.Time) error {
	attempt, err := s.store.Attempt(ctx, j.ID, p)
	if err != nil {
		return err
	}
	kind, why := "republished", "its task is no longer in the stream and it was never begun"
	if attempt > 0 {
		kind, why = "reproved", fmt.Sprintf("its task is no longer in the stream and no result was recorded (last attempt %d)", attempt)
	}
	ok, err := s.store.PrepareRepublish(ctx, j.ID, p, why)
	if err != nil || !ok {
		return err
	}
	jctx := telemetry.ContextWithTraceParent(ctx, j.TraceParent)
	pub, err := s.q.Republish(jctx, &c2clusterv1.PartitionTask{
		JobId: j.ID, Partition: p, Partitions: uint32(j.Partitions), Shape: j.Shape, Lane: j.Lane,
		BlobRef: j.BlobRef, BlobSize: j.BlobSize, BlobSha256: j.BlobSHA256, EnqueuedUnixMs: now.UnixMilli(),
	}, strconv.FormatInt(now.UnixMilli(), 10))
	if err != nil {
		return err
	}
	if err := s.store.SetPublished(ctx, j.ID, map[uint32]uint64{p: pub.Seq}, j.Partitions); err != nil {
		return err
	}
	s.cfg.Metrics.RepairsTotal.WithLabelValues(kind).Inc()
	s.log.WarnContext(jctx, "coordinator: watchdog: partition published again", telemetry.LogJob(j.ID),
		telemetry.LogPartition(int(p)), slog.String("repair", kind), slog.String("why", why))
	return nil
}
