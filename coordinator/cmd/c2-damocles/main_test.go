package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// damocles-worker's view, end to end on a real cluster: the ready line;
// two sectors' requests in flight at once while the cluster has no worker
// yet; meanwhile a wrong prover id, a wrong sector number, a wrong miner
// and malformed lines answered at once with errors naming what is wrong,
// the process serving on; a retry of an in-flight sector attached to its
// job; end of input with requests in flight: they are finished and
// answered once a worker joins, with proofs that verify as verify_seal
// does from the sectors' public values; then the process exits 0.
func TestDamoclesRequestsEndToEnd(t *testing.T) {
	c := newCluster(t)
	a := sealSector(t, 1000, 42, 1)
	b := sealSector(t, 1000, 43, 2)
	p := startProcessor(t, "-addr", c.url, "-priority", "high", "-timeout", "6m", "-progress", "100ms")
	l, ok := p.line(time.Minute)
	require.True(t, ok)
	require.Equal(t, readyLine, l, "the first line is vc-processors' ready message of stage c2")

	// No worker yet: requests 1 and 2 cannot be answered before one joins.
	p.send(c2Request{ID: 1, Task: a.task()})
	p.send(c2Request{ID: 2, Task: b.task()})

	wrongProver := a.task()
	wrongProver.ProverID = seal.ProverID(1001)
	p.send(c2Request{ID: 3, Task: wrongProver})
	wrongSector := a.task()
	wrongSector.SectorID = 43
	p.send(c2Request{ID: 4, Task: wrongSector})
	wrongMiner := a.task() // prover and miner agree, but the C1 is miner 1000's
	wrongMiner.MinerID, wrongMiner.ProverID = 1001, seal.ProverID(1001)
	p.send(c2Request{ID: 5, Task: wrongMiner})
	p.sendLine("this is not a request")
	p.sendLine(`{"id":6,"task":{"c1out":{"registered_proof":`)
	p.sendLine(`{"id":8,"task":{"c1out":{},"prover_id":"6AM=","sector_id":42,"miner_id":1000}}`)
	p.sendLine(`{"id":9,"task":{"miner_id":1000}}`)

	errs := map[uint64]string{}
	for range 7 {
		r := p.response(2 * time.Minute)
		require.Nil(t, r.Output, "request %d answered with a proof before any worker exists", r.ID)
		require.NotContains(t, errs, r.ID, "request %d answered twice", r.ID)
		errs[r.ID] = *r.ErrMsg
	}
	require.Len(t, errs, 7)
	require.Contains(t, errs[3], "prover_id e907")
	require.Contains(t, errs[3], "is not the prover id of miner_id 1000 (that is e807")
	require.Contains(t, errs[4], "not made for sector_id 43 of miner_id 1000")
	require.Contains(t, errs[5], "not made for sector_id 42 of miner_id 1001")
	require.Contains(t, errs[0], "malformed request", "a line without an id is answered with id 0")
	require.Contains(t, errs[6], "malformed request")
	require.Contains(t, errs[8], "prover_id")
	require.Contains(t, errs[9], "lacks [c1out (the SealCommitPhase1Output object) prover_id sector_id]")
	for id, msg := range errs {
		require.True(t, strings.HasPrefix(msg, "c2-damocles: "), "request %d: %q", id, msg)
	}

	// A retry of sector 42 while request 1 is in flight: the same job.
	p.send(c2Request{ID: 7, Task: a.task()})
	require.Eventually(t, func() bool {
		return strings.Contains(p.stderr.String(), `msg="attached to this sector's existing job" processor=c2-damocles`) &&
			strings.Contains(p.stderr.String(), "id=7 ")
	}, 2*time.Minute, 20*time.Millisecond, "request 7 attaches to request 1's job")
	jobs, err := c.api.List(c.ctx, c2clusterv1.JobState_JOB_STATE_UNSPECIFIED, 10)
	require.NoError(t, err)
	require.Len(t, jobs, 2, "one job per sector: none for the refused requests, none more for the retry")

	// End of input with requests 1, 2 and 7 in flight, then a worker.
	require.NoError(t, p.stdin.Close())
	c.startWorker()
	proofs := map[uint64][]byte{}
	for range 3 {
		r := p.response(5 * time.Minute)
		require.Nil(t, r.ErrMsg, "request %d: %v", r.ID, r.ErrMsg)
		proofs[r.ID] = r.Output.Proof
	}
	require.Len(t, proofs, 3)
	require.Len(t, proofs[1], 2*192, "the test shape's 2 partition proofs")
	verifyProof(t, a, proofs[1])
	verifyProof(t, b, proofs[2])
	require.Equal(t, proofs[1], proofs[7], "the retry got the same job's proof (a second proof would differ in its randomness)")
	_, ok = p.line(time.Minute)
	require.False(t, ok, "nothing after the last response")
	require.Equal(t, 0, p.exitCode(time.Minute))

	jobs, err = c.api.List(c.ctx, c2clusterv1.JobState_JOB_STATE_UNSPECIFIED, 10)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	sectors := map[uint64]uint64{}
	for _, j := range jobs {
		require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, j.State)
		require.Equal(t, c2clusterv1.Priority_PRIORITY_HIGH, j.Priority)
		sectors[j.GetSector().GetSectorNumber()] = j.GetSector().GetMinerId()
	}
	require.Equal(t, map[uint64]uint64{42: 1000, 43: 1000}, sectors)
	require.Contains(t, p.stderr.String(), `msg="end of input: finishing the requests in flight"`)
}

// A damocles retry after the sector's job was cancelled gets a new job
// instead of the cancelled one forever: the coordinator gives an
// idempotency key whose job was cancelled a new job (and c2-damocles moves
// to the next key of its chain if a coordinator returns the old one).
func TestRetryAfterCancelledJobSubmitsAfresh(t *testing.T) {
	c := newCluster(t)
	a := sealSector(t, 1000, 44, 3)
	p := startProcessor(t, "-addr", c.url, "-timeout", "6m")
	l, _ := p.line(time.Minute)
	require.Equal(t, readyLine, l)

	p.send(c2Request{ID: 1, Task: a.task()})
	var job string
	require.Eventually(t, func() bool {
		jobs, err := c.api.List(c.ctx, c2clusterv1.JobState_JOB_STATE_UNSPECIFIED, 10)
		if err != nil || len(jobs) != 1 {
			return false
		}
		job = jobs[0].JobId
		return true
	}, 2*time.Minute, 20*time.Millisecond)
	_, err := c.api.Cancel(c.ctx, job, "operator")
	require.NoError(t, err)
	r := p.response(2 * time.Minute)
	require.Equal(t, uint64(1), r.ID)
	require.NotNil(t, r.ErrMsg)
	require.Contains(t, *r.ErrMsg, "job "+job+" cancelled: operator")

	p.send(c2Request{ID: 2, Task: a.task()})
	c.startWorker()
	r = p.response(5 * time.Minute)
	require.Equal(t, uint64(2), r.ID)
	require.Nil(t, r.ErrMsg)
	verifyProof(t, a, r.Output.Proof)

	jobs, err := c.api.List(c.ctx, c2clusterv1.JobState_JOB_STATE_UNSPECIFIED, 10)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	states := map[c2clusterv1.JobState]int{}
	for _, j := range jobs {
		states[j.State]++
	}
	require.Equal(t, map[c2clusterv1.JobState]int{c2clusterv1.JobState_JOB_STATE_CANCELLED: 1, c2clusterv1.JobState_JOB_STATE_DONE: 1}, states)
}

// SIGTERM answers the requests in flight with an error at once and exits
// 1; their jobs stay in the cluster.
func TestSIGTERMAnswersRequestsInFlight(t *testing.T) {
	c := newCluster(t)
	a := sealSector(t, 1000, 45, 4)
	p := startProcessor(t, "-addr", c.url)
	l, _ := p.line(time.Minute)
	require.Equal(t, readyLine, l)
	p.send(c2Request{ID: 11, Task: a.task()})
	var job string
	require.Eventually(t, func() bool {
		jobs, err := c.api.List(c.ctx, c2clusterv1.JobState_JOB_STATE_UNSPECIFIED, 10)
		if err != nil || len(jobs) != 1 || !strings.Contains(p.stderr.String(), `msg="job submitted"`) {
			return false
		}
		job = jobs[0].JobId
		return true
	}, 2*time.Minute, 20*time.Millisecond)

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	r := p.response(time.Minute)
	require.Equal(t, uint64(11), r.ID)
	require.NotNil(t, r.ErrMsg)
	require.Contains(t, *r.ErrMsg, "interrupted: c2-damocles is stopping; job "+job)
	require.Equal(t, 1, p.exitCode(time.Minute))
	st, err := c.api.Status(c.ctx, job)
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_QUEUED, st.Job.State, "the job is not cancelled")
}

func TestFlagsHelpAndDamoclesArgs(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	none := env(nil)
	run1 := func(args []string, getenv func(string) string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errb, getenv)
		return code, out.String(), errb.String()
	}

	code, out, _ := run1([]string{"-h"}, env(map[string]string{"C2_COORDINATOR": "http://coord.example:8080", "C2_PRIORITY": "high"}))
	require.Equal(t, 0, code)
	require.Contains(t, out, "-addr string\n    \tcoordinator URL ($C2_COORDINATOR)")
	require.Contains(t, out, "[[processors.c2]]\nbin = \"")
	require.Contains(t, out, `args = ["-priority", "high", "-timeout", "2h0m0s"]`)
	require.Contains(t, out, `envs = { C2_COORDINATOR = "http://coord.example:8080" }`)

	code, _, errb := run1([]string{"-priority", "urgent"}, none)
	require.Equal(t, 2, code)
	require.Contains(t, errb, `-priority "urgent" is not high, normal or low`)
	code, _, errb = run1(nil, env(map[string]string{"C2_TIMEOUT": "soon"}))
	require.Equal(t, 2, code)
	require.Contains(t, errb, `$C2_TIMEOUT="soon" is not a duration`)
	code, _, errb = run1([]string{"-addr", "127.0.0.1:8080"}, none)
	require.Equal(t, 2, code)
	require.Contains(t, errb, "not an http:// or https:// URL")
	code, _, errb = run1([]string{"processor", "pc1"}, none)
	require.Equal(t, 2, code)
	require.Contains(t, errb, `unexpected arguments ["processor" "pc1"]`)

	// damocles' default arguments when a block sets bin without args; a
	// flag wins over its invalid variable; end of input ends it at once.
	code, out, errb = run1([]string{"-addr", "http://127.0.0.1:1", "-timeout", "1m", "processor", "c2"}, env(map[string]string{"C2_TIMEOUT": "soon"}))
	require.Equal(t, 0, code, errb)
	require.Equal(t, readyLine+"\n", out)
}

func TestReadLineAndRecoverID(t *testing.T) {
	in := "short\r\n" + `{"id":12,"task":` + strings.Repeat("x", 100) + "\n\n" + `{"id": 13}`
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	line, long, err := readLine(br, 32)
	require.NoError(t, err)
	require.False(t, long)
	require.Equal(t, "short", string(line))
	line, long, err = readLine(br, 32)
	require.NoError(t, err)
	require.True(t, long, "longer than the limit")
	require.Len(t, line, idPrefixBytes)
	id, ok := recoverID(line)
	require.True(t, ok)
	require.Equal(t, uint64(12), id)
	line, long, err = readLine(br, 32)
	require.NoError(t, err)
	require.False(t, long)
	require.Empty(t, line)
	line, long, err = readLine(br, 32)
	require.ErrorIs(t, err, io.EOF)
	require.False(t, long)
	id, ok = recoverID(line)
	require.True(t, ok, "the last line, without its newline")
	require.Equal(t, uint64(13), id)
	_, ok = recoverID([]byte(`{"task":{},"id":3}`))
	require.False(t, ok, "only a leading id is read from a line that does not decode")
}
