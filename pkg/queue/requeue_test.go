package queue

import (
	"testing"

	"github.com/stretchr/testify/require"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// TestTaskMsgIDOfRequeuedTask: a re-queued task's id names its round and
// parses back to its job and partition; other ids with ".r" stay errors.
func TestTaskMsgIDOfRequeuedTask(t *testing.T) {
	first := &c2clusterv1.PartitionTask{JobId: "job-1", Partition: 3}
	require.Equal(t, "job-1.3", TaskMsgID(first))
	again := &c2clusterv1.PartitionTask{JobId: "job-1", Partition: 3, Round: 2, ExcludedWorkers: []string{"w1"}}
	require.Equal(t, "job-1.3.r2", TaskMsgID(again))
	job, p, err := ParseMsgID(TaskMsgID(again))
	require.NoError(t, err)
	require.Equal(t, "job-1", job)
	require.Equal(t, uint32(3), p)
	// The watchdog's republished task (Republish: ".w<key>") parses too.
	job, p, err = ParseMsgID(MsgID("job-1", 3) + ".w1733390000123")
	require.NoError(t, err)
	require.Equal(t, "job-1", job)
	require.Equal(t, uint32(3), p)
	for _, bad := range []string{"job-1.r2", "job-1.3.rx", "a.b.3.r1", "job-1.3.r", "job-1.3.w", "job-1.3.wx", "a.b.3.w1"} {
		_, _, err := ParseMsgID(bad)
		require.Error(t, err, bad)
	}
	require.True(t, Excludes(again, "w1"))
	require.False(t, Excludes(again, "w2"))
	require.False(t, Excludes(first, "w1"))
}
