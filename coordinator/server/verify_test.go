package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/coordinator/server"
	"github.com/c2cluster/c2cluster/pkg/client"
	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/ceremony"
	"github.com/c2cluster/c2cluster/pkg/porep/circuit"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
	"github.com/c2cluster/c2cluster/pkg/porep/sealer"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	"github.com/c2cluster/c2cluster/proto/c2cluster/v1/c2clusterv1connect"
)

// startVerifyCoordinator runs a coordinator whose proof system also knows
// an official parameter directory, and returns its URL.
func (c *cluster) startVerifyCoordinator(officialDir string) string {
	c.t.Helper()
	srv, err := server.New(server.Config{Loop: queue.LoopConfig{FetchWait: 200 * time.Millisecond, RetryDelay: 100 * time.Millisecond}},
		c.q, c.store, &server.PoRep{ParamsDir: paramsDir, OfficialDir: officialDir})
	require.NoError(c.t, err)
	require.NoError(c.t, srv.Start(c.ctx))
	hs := httptest.NewServer(srv.Mux())
	c.t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Stop()
	})
	return hs.URL
}

// TestVerifyRPC proves a sealed sector with the cluster and checks its
// proof through the Verify RPC from the sector's public values (as Lotus
// prints them), then with each value changed, malformed, or without the
// key asked for.
func TestVerifyRPC(t *testing.T) {
	c := newCluster(t, queue.Config{})
	official := t.TempDir()
	url := c.startVerifyCoordinator(official)
	w := c.newWorker("w1")
	w.run(1)

	var buf bytes.Buffer
	res, err := sealer.WriteRandomC1(c.ctx, sealer.RandomC1Config{Shape: testShape, Seed: 77}, &buf)
	require.NoError(t, err)
	st, err := client.New(url).Prove(c.ctx, &c2clusterv1.SubmitRequest{C1Json: buf.Bytes(), Shape: testShape}, nil)
	require.NoError(t, err)
	require.Equal(t, c2clusterv1.JobState_JOB_STATE_DONE, st.State)

	rpc := c2clusterv1connect.NewProofServiceClient(http.DefaultClient, url)
	good := func() *c2clusterv1.VerifyRequest {
		return &c2clusterv1.VerifyRequest{
			RegisteredProof: porep.TestRegisteredProofPrefix + testShape,
			CommR:           seal.CommitmentCID(seal.CommR, res.CommR),
			CommD:           hex.EncodeToString(res.CommD[:]),
			ProverId:        res.Identity.ProverID[:],
			SectorNumber:    res.Identity.SectorID,
			Ticket:          res.Identity.Ticket[:],
			Seed:            res.Output.Seed[:],
			Proof:           st.Proof,
		}
	}
	verify := func(req *c2clusterv1.VerifyRequest) (*c2clusterv1.VerifyResponse, error) {
		r, err := rpc.Verify(c.ctx, connect.NewRequest(req))
		if err != nil {
			return nil, err
		}
		return r.Msg, nil
	}

	v, err := verify(good())
	require.NoError(t, err)
	require.True(t, v.Valid, v.Reason)
	require.Equal(t, testShape, v.Shape)
	require.Equal(t, c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_CLUSTER, v.Key)
	require.Equal(t, circuit.VKPath(paramsDir, testShape), v.KeyFile)

	for name, change := range map[string]func(*c2clusterv1.VerifyRequest){
		"seed":          func(r *c2clusterv1.VerifyRequest) { r.Seed = bytes.Repeat([]byte{7}, 32) },
		"sector number": func(r *c2clusterv1.VerifyRequest) { r.SectorNumber++ },
		"miner id":      func(r *c2clusterv1.VerifyRequest) { r.ProverId, r.MinerId = nil, 1000 },
		"swapped proofs": func(r *c2clusterv1.VerifyRequest) {
			p := bytes.Clone(r.Proof)
			copy(p[192:384], r.Proof[:192])
			r.Proof = p
		},
	} {
		req := good()
		change(req)
		v, err := verify(req)
		require.NoError(t, err, name)
		require.False(t, v.Valid, name)
		require.Contains(t, v.Reason, "proof does not verify", name)
		require.NotEmpty(t, v.FailedPartitions, name)
		if name == "swapped proofs" {
			require.Equal(t, []uint32{1}, v.FailedPartitions)
		}
	}

	for _, tc := range []struct {
		change func(*c2clusterv1.VerifyRequest)
		code   connect.Code
		msg    string
	}{
		{func(r *c2clusterv1.VerifyRequest) { r.Proof = r.Proof[:192] }, connect.CodeInvalidArgument, "malformed proof: 192 bytes"},
		{func(r *c2clusterv1.VerifyRequest) { r.RegisteredProof = "StackedDrg1TiBV1_1" }, connect.CodeInvalidArgument, `registered proof "StackedDrg1TiBV1_1"`},
		{func(r *c2clusterv1.VerifyRequest) { r.Ticket = r.Ticket[:31] }, connect.CodeInvalidArgument, "ticket has 31 bytes, want 32"},
		{func(r *c2clusterv1.VerifyRequest) { r.CommD = r.CommR }, connect.CodeInvalidArgument, "is a comm_r CID"},
		{func(r *c2clusterv1.VerifyRequest) { r.CommR = strings.Repeat("00", 32) }, connect.CodeInvalidArgument, "all-zero commitment (comm_r)"},
		{func(r *c2clusterv1.VerifyRequest) {
			r.Key = c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_OFFICIAL
		},
			connect.CodeFailedPrecondition, "no official verifying key"},
		{func(r *c2clusterv1.VerifyRequest) {
			r.RegisteredProof, r.Proof = "StackedDrg32GiBV1_1", make([]byte, 10*192)
		}, connect.CodeFailedPrecondition, "lotus fetch-params 32GiB"},
		{func(r *c2clusterv1.VerifyRequest) {
			r.RegisteredProof, r.Proof = "StackedDrg32GiBV1_1", make([]byte, 10*192)
			r.Key = c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_CLUSTER
		}, connect.CodeFailedPrecondition, "proved with Filecoin's parameters only"},
		{func(r *c2clusterv1.VerifyRequest) {
			r.RegisteredProof, r.Key = "StackedDrg32GiBV1_1", c2clusterv1.VerifyingKeySource_VERIFYING_KEY_SOURCE_OFFICIAL
		}, connect.CodeFailedPrecondition, "lotus fetch-params 32GiB"},
	} {
		req := good()
		tc.change(req)
		_, err := verify(req)
		require.Equal(t, tc.code, connect.CodeOf(err), "%v", err)
		require.ErrorContains(t, err, tc.msg)
	}

	// A file at the official name that is not the official one is refused,
	// not used.
	s2k, err := porep.ShapeByName("2KiB")
	require.NoError(t, err)
	paths, err := ceremony.PathsIn(official, s2k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(paths.VK, []byte("not a key"), 0o644))
	req := good()
	req.RegisteredProof, req.Proof = "StackedDrg2KiBV1_1", st.Proof[:192]
	_, err = verify(req)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	require.ErrorContains(t, err, "parameters.json says")
	require.ErrorContains(t, err, filepath.Base(paths.VK))

	// Plain HTTP/JSON, bytes as base64.
	body, err := json.Marshal(map[string]any{
		"registeredProof": testShape, "commR": seal.CommitmentCID(seal.CommR, res.CommR),
		"commD": seal.CommitmentCID(seal.CommD, res.CommD), "proverId": base64.StdEncoding.EncodeToString(res.Identity.ProverID[:]),
		"sectorNumber": res.Identity.SectorID, "ticket": base64.StdEncoding.EncodeToString(res.Identity.Ticket[:]),
		"seed": base64.StdEncoding.EncodeToString(res.Output.Seed[:]), "proof": base64.StdEncoding.EncodeToString(st.Proof),
	})
	require.NoError(t, err)
	hr, err := http.Post(url+"/c2cluster.v1.ProofService/Verify", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	out, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	require.Equal(t, 200, hr.StatusCode, string(out))
	require.Contains(t, string(out), `"valid":true`)
}
