package queue

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of Config.
const (
	StreamDefault           = "C2_PARTS"
	SubjectPrefixDefault    = "c2.part"
	ControlPrefixDefault    = "c2.ctl"
	ControlStreamDefault    = "C2_CTL"
	DeadLetterStreamDefault = "C2_DLQ"
	BlobBucketDefault       = "C2_BLOBS"
	AckWaitDefault          = 15 * time.Second
	MaxDeliverDefault       = 5
	NakDelayDefault         = 5 * time.Second
	DuplicateWindowDefault  = 30 * time.Minute
	MaxAgeDefault           = 72 * time.Hour
	MaxTaskBytesDefault     = 64 << 10
	IdlePollDefault         = time.Second
)

// LanesDefault are the priority lanes, highest first.
var LanesDefault = []string{"high", "normal", "low"}

// Config names and sizes the JetStream resources. The zero value of every
// field means its default; Open validates the result.
type Config struct {
	// Stream is the WorkQueue stream of partition tasks. Default "C2_PARTS".
	Stream string
	// SubjectPrefix of task subjects, <prefix>.<shape>.<lane>. Default
	// "c2.part".
	SubjectPrefix string
	// ControlPrefix of control subjects (<prefix>.assemble). Default
	// "c2.ctl".
	ControlPrefix string
	// Lanes are the priority lanes, highest first. Default high, normal,
	// low. Lane names are subject tokens ([A-Za-z0-9_-]).
	Lanes []string
	// ControlStream carries assembly requests (WorkQueue). Default "C2_CTL".
	ControlStream string
	// DeadLetterStream captures the MAX_DELIVERIES and MSG_TERMINATED
	// advisories of Stream's consumers. Default "C2_DLQ".
	DeadLetterStream string
	// BlobBucket is the object store bucket of C1 blobs. Default "C2_BLOBS".
	BlobBucket string
	// Storage of all streams. Default file storage.
	Storage jetstream.StorageType
	// Replicas of all streams (1 for a single server, 3 for a cluster).
	// Default 1.
	Replicas int
	// AckWait is how long a delivered task may go without an ack or an
	// InProgress heartbeat before it is redelivered: a live worker
	// heartbeats every AckWait/4 however long it proves, so AckWait bounds
	// how long a crashed worker's partition waits before another worker
	// gets it. Default 15 s.
	AckWait time.Duration
	// MaxDeliver is how many times a task is delivered before it becomes a
	// dead letter. Default 5.
	MaxDeliver int
	// NakDelay is the redelivery delay of a transient failure that names
	// none. Default 5 s.
	NakDelay time.Duration
	// DuplicateWindow is how long Nats-Msg-Id deduplication remembers a
	// task. Default 30 min.
	DuplicateWindow time.Duration
	// MaxAge drops tasks and blobs older than this. Default 72 h.
	MaxAge time.Duration
	// MaxTaskBytes is the stream's max message size; tasks go by reference
	// and are a few hundred bytes. Default 64 KiB.
	MaxTaskBytes int32
}

func (c Config) withDefaults() Config {
	if c.Stream == "" {
		c.Stream = StreamDefault
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = SubjectPrefixDefault
	}
	if c.ControlPrefix == "" {
		c.ControlPrefix = ControlPrefixDefault
	}
	if len(c.Lanes) == 0 {
		c.Lanes = append([]string(nil), LanesDefault...)
	}
	if c.ControlStream == "" {
		c.ControlStream = ControlStreamDefault
	}
	if c.DeadLetterStream == "" {
		c.DeadLetterStream = DeadLetterStreamDefault
	}
	if c.BlobBucket == "" {
		c.BlobBucket = BlobBucketDefault
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.AckWait == 0 {
		c.AckWait = AckWaitDefault
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = MaxDeliverDefault
	}
	if c.NakDelay == 0 {
		c.NakDelay = NakDelayDefault
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = DuplicateWindowDefault
	}
	if c.MaxAge == 0 {
		c.MaxAge = MaxAgeDefault
	}
	if c.MaxTaskBytes == 0 {
		c.MaxTaskBytes = MaxTaskBytesDefault
	}
	return c
}

func (c Config) validate() error {
	for name, v := range map[string]string{"Stream": c.Stream, "ControlStream": c.ControlStream,
		"DeadLetterStream": c.DeadLetterStream, "BlobBucket": c.BlobBucket} {
		if err := checkToken(v); err != nil {
			return fmt.Errorf("%w: Config.%s: %v", ErrInvalidConfig, name, err)
		}
	}
	if c.Stream == c.ControlStream || c.Stream == c.DeadLetterStream || c.ControlStream == c.DeadLetterStream {
		return fmt.Errorf("%w: Config.Stream, ControlStream and DeadLetterStream must differ", ErrInvalidConfig)
	}
	for name, v := range map[string]string{"SubjectPrefix": c.SubjectPrefix, "ControlPrefix": c.ControlPrefix} {
		if err := checkSubject(v); err != nil {
			return fmt.Errorf("%w: Config.%s: %v", ErrInvalidConfig, name, err)
		}
	}
	if c.SubjectPrefix == c.ControlPrefix {
		return fmt.Errorf("%w: Config.SubjectPrefix and ControlPrefix must differ", ErrInvalidConfig)
	}
	seen := map[string]bool{}
	for _, l := range c.Lanes {
		if err := checkToken(l); err != nil {
			return fmt.Errorf("%w: Config.Lanes: %v", ErrInvalidConfig, err)
		}
		if seen[l] {
			return fmt.Errorf("%w: Config.Lanes: lane %q listed twice", ErrInvalidConfig, l)
		}
		seen[l] = true
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		return fmt.Errorf("%w: Config.Replicas %d is outside 1..5", ErrInvalidConfig, c.Replicas)
	}
	if c.AckWait < 100*time.Millisecond {
		return fmt.Errorf("%w: Config.AckWait %v is below 100ms", ErrInvalidConfig, c.AckWait)
	}
	if c.MaxDeliver < 1 {
		return fmt.Errorf("%w: Config.MaxDeliver %d is below 1", ErrInvalidConfig, c.MaxDeliver)
	}
	if c.NakDelay < 0 || c.DuplicateWindow < 0 || c.MaxAge < 0 {
		return fmt.Errorf("%w: Config.NakDelay, DuplicateWindow and MaxAge must not be negative", ErrInvalidConfig)
	}
	if c.DuplicateWindow > c.MaxAge {
		return fmt.Errorf("%w: Config.DuplicateWindow %v exceeds MaxAge %v", ErrInvalidConfig, c.DuplicateWindow, c.MaxAge)
	}
	if c.MaxTaskBytes < 1024 {
		return fmt.Errorf("%w: Config.MaxTaskBytes %d is below 1024", ErrInvalidConfig, c.MaxTaskBytes)
	}
	return nil
}

// HasLane reports whether lane is one of the configured lanes.
func (c Config) HasLane(lane string) bool { return slices.Contains(c.Lanes, lane) }

// checkSubject accepts a literal subject: dot-separated tokens of
// [A-Za-z0-9_-].
func checkSubject(s string) error {
	if s == "" {
		return fmt.Errorf("empty subject")
	}
	for _, tok := range strings.Split(s, ".") {
		if err := checkToken(tok); err != nil {
			return fmt.Errorf("subject %q: %v", s, err)
		}
	}
	return nil
}
