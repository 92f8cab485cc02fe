package client

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

func TestJobErrorAndProgressLine(t *testing.T) {
	failed := &c2clusterv1.JobStatus{JobId: "abc", State: c2clusterv1.JobState_JOB_STATE_FAILED, Partitions: 10, PartitionsDone: 7,
		Reason: "partition 3 failed after 5 deliveries", Timings: &c2clusterv1.StageTimings{TotalMs: 4200}}
	err := jobErr(failed)
	require.True(t, errors.Is(err, ErrJobFailed))
	var je *JobError
	require.ErrorAs(t, err, &je)
	require.Equal(t, "job abc failed: partition 3 failed after 5 deliveries", err.Error())
	require.Equal(t, "job abc failed     7/10 partitions    4.2s (partition 3 failed after 5 deliveries)", ProgressLine(failed))

	done := &c2clusterv1.JobStatus{JobId: "abc", State: c2clusterv1.JobState_JOB_STATE_DONE}
	require.NoError(t, jobErr(done))
	require.True(t, Terminal(done.State))
	require.False(t, Terminal(c2clusterv1.JobState_JOB_STATE_ASSEMBLING))
	require.Equal(t, "assembling", StateName(c2clusterv1.JobState_JOB_STATE_ASSEMBLING))
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
