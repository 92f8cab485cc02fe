package queue

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

func validTask() *c2clusterv1.PartitionTask {
	return &c2clusterv1.PartitionTask{JobId: "j1", Partition: 1, Partitions: 2, Shape: "2KiB", Lane: "high", BlobRef: "j1", BlobSha256: make([]byte, 32)}
}

func TestTaskRoundTripAndValidation(t *testing.T) {
	b, err := EncodeTask(validTask())
	require.NoError(t, err)
	got, err := DecodeTask(b)
	require.NoError(t, err)
	require.True(t, proto.Equal(validTask(), got))

	for name, mut := range map[string]func(*c2clusterv1.PartitionTask){
		"job_id":      func(t *c2clusterv1.PartitionTask) { t.JobId = "a{b}" },
		"shape":       func(t *c2clusterv1.PartitionTask) { t.Shape = "" },
		"partition 2": func(t *c2clusterv1.PartitionTask) { t.Partition = 2 },
		"partitions":  func(t *c2clusterv1.PartitionTask) { t.Partitions = MaxPartitions + 1 },
		"blob_sha256": func(t *c2clusterv1.PartitionTask) { t.BlobSha256 = []byte{1} },
	} {
		tk := validTask()
		mut(tk)
		_, err := EncodeTask(tk)
		require.ErrorIs(t, err, ErrBadTask, name)
		require.ErrorContains(t, err, name)
	}
	_, err = DecodeTask([]byte{0xff, 0xff})
	require.ErrorIs(t, err, ErrBadTask)
}

func TestMsgIDRoundTrip(t *testing.T) {
	job, p, err := ParseMsgID(MsgID("abc-1", 7))
	require.NoError(t, err)
	require.Equal(t, "abc-1", job)
	require.EqualValues(t, 7, p)
	for _, bad := range []string{"", "abc", "abc.x", ".1", "a b.1", "abc.99999"} {
		_, _, err := ParseMsgID(bad)
		require.ErrorIs(t, err, ErrBadTask, bad)
	}
}

func TestParseAdvisory(t *testing.T) {
	d, err := ParseAdvisory("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.C2_PARTS.part-x-high",
		[]byte(`{"type":"io.nats.jetstream.advisory.v1.terminated","stream":"C2_PARTS","stream_seq":9,"deliveries":1,"reason":"j1.3: bad input: x"}`))
	require.NoError(t, err)
	require.Equal(t, DeadLetter{Kind: DeadTerminated, JobID: "j1", Partition: 3, StreamSeq: 9, Deliveries: 1, Reason: "bad input: x"}, d)
	d, err = ParseAdvisory("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.C2_PARTS.part-x-high",
		[]byte(`{"stream_seq":7,"deliveries":1,"reason":"rejected task (stream seq 7): j1.3: forged"}`))
	require.NoError(t, err)
	require.Equal(t, DeadLetter{Kind: DeadRejected, StreamSeq: 7, Deliveries: 1, Reason: "rejected task (stream seq 7): j1.3: forged"}, d)
	d, err = ParseAdvisory("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.C2_PARTS.part-x-high", []byte(`{"stream_seq":4,"deliveries":5}`))
	require.NoError(t, err)
	require.Equal(t, DeadMaxDeliveries, d.Kind)
	for _, c := range []struct{ subj, body string }{
		{"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.c", `{"stream_seq":1,"reason":"no prefix"}`},
		{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.c", `{"deliveries":5}`},
		{"other.subject", `{"stream_seq":1}`},
		{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.c", `{`},
	} {
		_, err := ParseAdvisory(c.subj, []byte(c.body))
		require.Error(t, err, c.body)
	}
}

// FuzzDecodeTask: task bytes come from the network; any input either
// decodes to a task that passes validation and re-encodes, or fails with
// ErrBadTask, never a panic.
func FuzzDecodeTask(f *testing.F) {
	b, _ := EncodeTask(validTask())
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x80})
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := DecodeTask(data)
		if err != nil {
			require.ErrorIs(t, err, ErrBadTask)
			return
		}
		require.NoError(t, ValidateTask(tk))
		again, err := EncodeTask(tk)
		require.NoError(t, err)
		back, err := DecodeTask(again)
		require.NoError(t, err)
		require.True(t, proto.Equal(tk, back))
	})
}

// FuzzParseAdvisory: advisory bytes are read from a stream anyone in the
// account can publish to.
func FuzzParseAdvisory(f *testing.F) {
	f.Add("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.c", []byte(`{"stream_seq":9,"reason":"j1.3: x"}`))
	f.Add("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.c", []byte(`{"stream_seq":4}`))
	f.Fuzz(func(t *testing.T, subj string, data []byte) {
		d, err := ParseAdvisory(subj, data)
		if err == nil {
			require.NotZero(t, d.StreamSeq)
			switch d.Kind {
			case DeadTerminated:
				require.NoError(t, CheckName("job", d.JobID))
			case DeadRejected:
				require.Empty(t, d.JobID)
			}
		}
	})
}
