package queue

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Limits on task fields, checked by EncodeTask and DecodeTask.
const (
	MaxTokenLen   = 64
	MaxPartitions = 1024
)

// checkToken accepts a NATS subject token / object name / Redis hash-tag
// safe identifier: 1..64 characters of [A-Za-z0-9_-].
func checkToken(s string) error {
	if s == "" {
		return fmt.Errorf("empty name")
	}
	if len(s) > MaxTokenLen {
		return fmt.Errorf("name of %d bytes exceeds %d", len(s), MaxTokenLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("name %q has character %q outside [A-Za-z0-9_-]", s, c)
		}
	}
	return nil
}

// CheckName reports whether s can be a job id, shape or lane: 1..64
// characters of [A-Za-z0-9_-] (a NATS subject token, an object name and a
// Redis hash tag at once). The error names what is wrong.
func CheckName(kind, s string) error {
	if err := checkToken(s); err != nil {
		return fmt.Errorf("%s: %v", kind, err)
	}
	return nil
}

// ValidateTask checks a task's fields.
func ValidateTask(t *c2clusterv1.PartitionTask) error {
	if t == nil {
		return fmt.Errorf("%w: nil task", ErrBadTask)
	}
	for kind, v := range map[string]string{"job_id": t.JobId, "shape": t.Shape, "lane": t.Lane, "blob_ref": t.BlobRef} {
		if err := CheckName(kind, v); err != nil {
			return fmt.Errorf("%w: %v", ErrBadTask, err)
		}
	}
	if t.Partitions == 0 || t.Partitions > MaxPartitions {
		return fmt.Errorf("%w: partitions %d outside 1..%d", ErrBadTask, t.Partitions, MaxPartitions)
	}
	if t.Partition >= t.Partitions {
		return fmt.Errorf("%w: partition %d not below partitions %d", ErrBadTask, t.Partition, t.Partitions)
	}
	if len(t.BlobSha256) != 0 && len(t.BlobSha256) != 32 {
		return fmt.Errorf("%w: blob_sha256 has %d bytes, want 32", ErrBadTask, len(t.BlobSha256))
	}
	return nil
}

// EncodeTask validates and marshals a task.
func EncodeTask(t *c2clusterv1.PartitionTask) ([]byte, error) {
	if err := ValidateTask(t); err != nil {
		return nil, err
	}
	b, err := proto.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal: %v", ErrBadTask, err)
	}
	return b, nil
}

// DecodeTask unmarshals and validates task bytes read from the queue. Any
// failure is an ErrBadTask naming the problem.
func DecodeTask(b []byte) (*c2clusterv1.PartitionTask, error) {
	if len(b) > MaxTaskBytesDefault {
		return nil, fmt.Errorf("%w: %d bytes exceeds %d", ErrBadTask, len(b), MaxTaskBytesDefault)
	}
	t := &c2clusterv1.PartitionTask{}
	if err := proto.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("%w: unmarshal: %v", ErrBadTask, err)
	}
	if err := ValidateTask(t); err != nil {
		return nil, err
	}
	return t, nil
}

// MsgID is the Nats-Msg-Id of a job's partition task: "<job>.<partition>".
func MsgID(jobID string, partition uint32) string {
	return jobID + "." + strconv.FormatUint(uint64(partition), 10)
}

// TaskMsgID is the Nats-Msg-Id of a task: MsgID for a first publication,
// "<job>.<partition>.r<round>" for a task the coordinator re-queued.
func TaskMsgID(t *c2clusterv1.PartitionTask) string {
	id := MsgID(t.GetJobId(), t.GetPartition())
	if t.GetRound() > 0 {
		id += ".r" + strconv.FormatUint(uint64(t.GetRound()), 10)
	}
	return id
}

// ParseMsgID splits a MsgID, a TaskMsgID (the round, ".r<round>", is
// dropped) or a Republish id (the watchdog's ".w<key>", dropped too).
func ParseMsgID(id string) (jobID string, partition uint32, err error) {
	if strings.Count(id, ".") == 2 {
		i := strings.LastIndexByte(id, '.')
		suffix := id[i+1:]
		switch {
		case strings.HasPrefix(suffix, "r"):
			if _, err := strconv.ParseUint(suffix[1:], 10, 32); err == nil {
				id = id[:i]
			}
		case strings.HasPrefix(suffix, "w"):
			if _, err := strconv.ParseUint(suffix[1:], 10, 64); err == nil {
				id = id[:i]
			}
		}
	}
	i := strings.LastIndexByte(id, '.')
	if i < 0 {
		return "", 0, fmt.Errorf("%w: message id %q has no '.'", ErrBadTask, id)
	}
	if err := checkToken(id[:i]); err != nil {
		return "", 0, fmt.Errorf("%w: message id %q: %v", ErrBadTask, id, err)
	}
	p, err := strconv.ParseUint(id[i+1:], 10, 32)
	if err != nil || p >= MaxPartitions {
		return "", 0, fmt.Errorf("%w: message id %q: bad partition", ErrBadTask, id)
	}
	return id[:i], uint32(p), nil
}
