package cuzk

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/c2cluster/c2cluster/pkg/jobstore"
	cuzkv1 "github.com/c2cluster/c2cluster/proto/cuzk/v1"
)

// curioWire is Curio's cuzk.v1 wire contract as its Go client's descriptor
// declares it (filecoin-project/curio lib/cuzk/proving.pb.go at
// 3c53695c4b27eb9cf7055dfb757b1f3b510a530e), written out by hand: every
// method with its types, every message field with its number, cardinality
// and type, every enum value with its number.
const curioWire = `service cuzk.v1.ProvingEngine
  SubmitProof(cuzk.v1.SubmitProofRequest) cuzk.v1.SubmitProofResponse
  AwaitProof(cuzk.v1.AwaitProofRequest) cuzk.v1.AwaitProofResponse
  Prove(cuzk.v1.ProveRequest) cuzk.v1.ProveResponse
  CancelProof(cuzk.v1.CancelProofRequest) cuzk.v1.CancelProofResponse
  GetStatus(cuzk.v1.GetStatusRequest) cuzk.v1.GetStatusResponse
  GetMetrics(cuzk.v1.GetMetricsRequest) cuzk.v1.GetMetricsResponse
  PreloadSRS(cuzk.v1.PreloadSrsRequest) cuzk.v1.PreloadSrsResponse
  EvictSRS(cuzk.v1.EvictSrsRequest) cuzk.v1.EvictSrsResponse
enum cuzk.v1.ProofKind PROOF_KIND_UNSPECIFIED=0 POREP_SEAL_COMMIT=1 SNAP_DEALS_UPDATE=2 WINDOW_POST_PARTITION=3 WINNING_POST=4
enum cuzk.v1.Priority PRIORITY_UNSPECIFIED=0 LOW=1 NORMAL=2 HIGH=3 CRITICAL=4
message cuzk.v1.SubmitProofRequest
  request_id=1 optional string
  proof_kind=2 optional enum cuzk.v1.ProofKind
  sector_size=3 optional uint64
  registered_proof=4 optional uint64
  priority=5 optional enum cuzk.v1.Priority
  vanilla_proof=10 optional bytes
  vanilla_proofs=11 repeated bytes
  sector_number=20 optional uint64
  miner_id=21 optional uint64
  randomness=22 optional bytes
  partition_index=23 optional uint32
  comm_r_old=30 optional bytes
  comm_r_new=31 optional bytes
  comm_d_new=32 optional bytes
message cuzk.v1.SubmitProofResponse
  job_id=1 optional string
  queue_position=2 optional uint32
  assigned_gpu=3 optional string
message cuzk.v1.AwaitProofRequest
  job_id=1 optional string
  timeout_ms=2 optional uint64
message cuzk.v1.AwaitProofResponse
  job_id=1 optional string
  status=2 optional enum cuzk.v1.AwaitProofResponse.Status
  proof=3 optional bytes
  error_message=4 optional string
  queue_wait_ms=10 optional uint64
  srs_load_ms=11 optional uint64
  synthesis_ms=12 optional uint64
  gpu_compute_ms=13 optional uint64
  total_ms=14 optional uint64
enum cuzk.v1.AwaitProofResponse.Status UNKNOWN=0 COMPLETED=1 FAILED=2 CANCELLED=3 TIMEOUT=4
message cuzk.v1.ProveRequest
  submit=1 optional message cuzk.v1.SubmitProofRequest
message cuzk.v1.ProveResponse
  result=1 optional message cuzk.v1.AwaitProofResponse
message cuzk.v1.CancelProofRequest
  job_id=1 optional string
message cuzk.v1.CancelProofResponse
  was_running=1 optional bool
message cuzk.v1.GetStatusRequest
message cuzk.v1.GetStatusResponse
  gpus=1 repeated message cuzk.v1.GPUStatus
  loaded_srs=2 repeated message cuzk.v1.SRSStatus
  queues=3 repeated message cuzk.v1.QueueStatus
  total_proofs_completed=4 optional uint64
  total_proofs_failed=5 optional uint64
  uptime_seconds=6 optional uint64
  pinned_memory_bytes=7 optional uint64
  pinned_memory_limit_bytes=8 optional uint64
message cuzk.v1.GPUStatus
  ordinal=1 optional uint32
  name=2 optional string
  vram_total_bytes=3 optional uint64
  vram_free_bytes=4 optional uint64
  current_job_id=5 optional string
  current_proof_kind=6 optional string
message cuzk.v1.SRSStatus
  circuit_id=1 optional string
  tier=2 optional enum cuzk.v1.SRSStatus.Tier
  size_bytes=3 optional uint64
  ref_count=4 optional uint32
enum cuzk.v1.SRSStatus.Tier HOT=0 WARM=1 COLD=2
message cuzk.v1.QueueStatus
  proof_kind=1 optional string
  pending=2 optional uint32
  in_progress=3 optional uint32
message cuzk.v1.PreloadSrsRequest
  circuit_id=1 optional string
message cuzk.v1.PreloadSrsResponse
  already_loaded=1 optional bool
  load_time_ms=2 optional uint64
message cuzk.v1.EvictSrsRequest
  circuit_id=1 optional string
message cuzk.v1.EvictSrsResponse
  was_loaded=1 optional bool
  freed_bytes=2 optional uint64
message cuzk.v1.GetMetricsRequest
message cuzk.v1.GetMetricsResponse
  prometheus_text=1 optional string
`

// describe writes a file descriptor out in curioWire's form.
func describe(fd protoreflect.FileDescriptor) string {
	var b strings.Builder
	enum := func(e protoreflect.EnumDescriptor) {
		fmt.Fprintf(&b, "enum %s", e.FullName())
		for i := 0; i < e.Values().Len(); i++ {
			v := e.Values().Get(i)
			fmt.Fprintf(&b, " %s=%d", v.Name(), v.Number())
		}
		b.WriteString("\n")
	}
	for i := 0; i < fd.Services().Len(); i++ {
		s := fd.Services().Get(i)
		fmt.Fprintf(&b, "service %s\n", s.FullName())
		for j := 0; j < s.Methods().Len(); j++ {
			m := s.Methods().Get(j)
			stream := ""
			if m.IsStreamingClient() || m.IsStreamingServer() {
				stream = " streaming"
			}
			fmt.Fprintf(&b, "  %s(%s) %s%s\n", m.Name(), m.Input().FullName(), m.Output().FullName(), stream)
		}
	}
	for i := 0; i < fd.Enums().Len(); i++ {
		enum(fd.Enums().Get(i))
	}
	for i := 0; i < fd.Messages().Len(); i++ {
		m := fd.Messages().Get(i)
		fmt.Fprintf(&b, "message %s\n", m.FullName())
		for j := 0; j < m.Fields().Len(); j++ {
			f := m.Fields().Get(j)
			typ := f.Kind().String()
			switch f.Kind() {
			case protoreflect.EnumKind:
				typ += " " + string(f.Enum().FullName())
			case protoreflect.MessageKind:
				typ += " " + string(f.Message().FullName())
			}
			card := "optional"
			if f.Cardinality() == protoreflect.Repeated {
				card = "repeated"
			}
			if f.HasPresence() && f.Kind() != protoreflect.MessageKind {
				card = "explicit" // proto3 `optional`: not Curio's
			}
			fmt.Fprintf(&b, "  %s=%d %s %s\n", f.Name(), f.Number(), card, typ)
		}
		for j := 0; j < m.Enums().Len(); j++ {
			enum(m.Enums().Get(j))
		}
	}
	return b.String()
}

// TestWireFormatIsCurios: proto/cuzk/v1/proving.proto declares exactly
// Curio's wire contract.
func TestWireFormatIsCurios(t *testing.T) {
	fd := cuzkv1.File_cuzk_v1_proving_proto
	require.Equal(t, "cuzk.v1", string(fd.Package()))
	require.Equal(t, protoreflect.Proto3, fd.Syntax())
	require.Equal(t, curioWire, describe(fd))
}

// TestIdempotencyKey: keys stay within the coordinator's limit, keep a
// short request_id readable, and differ by C1 output and attempt.
func TestIdempotencyKey(t *testing.T) {
	d1, d2 := sha256.Sum256([]byte("c1 a")), sha256.Sum256([]byte("c1 b"))
	k := idempotencyKey("porep-1000-7", d1, 0)
	require.True(t, strings.HasPrefix(k, "porep-1000-7/c1:"), k)
	require.NotEqual(t, k, idempotencyKey("porep-1000-7", d2, 0))
	require.NotEqual(t, k, idempotencyKey("porep-1000-7", d1, 1))
	require.NotEqual(t, k, idempotencyKey("porep-1000-8", d1, 0))
	require.Equal(t, k, idempotencyKey("porep-1000-7", d1, 0))
	long := strings.Repeat("x", 500)
	for _, id := range []string{long, strings.Repeat("y", 64), strings.Repeat("z", 65)} {
		for _, attempt := range []int{0, 1, maxRetriesLimit} {
			key := idempotencyKey(id, d1, attempt)
			require.LessOrEqual(t, len(key), jobstore.MaxIdemKeyLen, key)
		}
	}
	require.NotEqual(t, idempotencyKey(long, d1, 0), idempotencyKey(long+"!", d1, 0))
}

// TestListenUnix: a stale socket file is replaced, a live socket and a
// file that is not a socket are refused, the socket is 0660 and removed on
// close.
func TestListenUnix(t *testing.T) {
	dir, err := os.MkdirTemp("", "cuzk-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sub", "cuzk.sock")

	ln, err := ListenUnix(path)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, SocketMode, fi.Mode().Perm())
	_, err = ListenUnix(path)
	require.ErrorContains(t, err, "in use by another process")
	require.NoError(t, ln.Close())
	_, err = os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "closing removes the socket")

	// A socket left behind by a process that is gone.
	ln, err = ListenUnix(path)
	require.NoError(t, err)
	ln.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
	require.NoError(t, ln.Close())
	_, err = os.Lstat(path)
	require.NoError(t, err, "the stale socket is there")
	ln, err = ListenUnix(path)
	require.NoError(t, err, "a stale socket is replaced")
	require.NoError(t, ln.Close())

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	_, err = ListenUnix(file)
	require.ErrorContains(t, err, "is not a unix socket")
	_, err = ListenUnix("")
	require.Error(t, err)
}
