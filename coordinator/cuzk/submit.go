package cuzk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
	cuzkv1 "github.com/c2cluster/c2cluster/proto/cuzk/v1"
)

// proofKindPoRep is the QueueStatus.proof_kind of PoRep C2 (the enum
// value's name).
var proofKindPoRep = cuzkv1.ProofKind_POREP_SEAL_COMMIT.String()

// lanes maps cuzk priorities onto the coordinator's (lanes high, normal,
// low).
var lanes = map[cuzkv1.Priority]c2clusterv1.Priority{
	cuzkv1.Priority_PRIORITY_UNSPECIFIED: c2clusterv1.Priority_PRIORITY_NORMAL,
	cuzkv1.Priority_LOW:                  c2clusterv1.Priority_PRIORITY_LOW,
	cuzkv1.Priority_NORMAL:               c2clusterv1.Priority_PRIORITY_NORMAL,
	cuzkv1.Priority_HIGH:                 c2clusterv1.Priority_PRIORITY_HIGH,
	cuzkv1.Priority_CRITICAL:             c2clusterv1.Priority_PRIORITY_HIGH,
}

// maxRetriesLimit keeps retry keys within the coordinator's idempotency key
// length (see idempotencyKey).
const maxRetriesLimit = 999

// submit validates a SubmitProofRequest, turns it into the coordinator's
// SubmitRequest and submits it (see idempotencyKey for request_id).
func (e *Engine) submit(ctx context.Context, req *cuzkv1.SubmitProofRequest) (*c2clusterv1.SubmitResponse, error) {
	sreq, err := e.request(req)
	if err != nil {
		return nil, err
	}
	if req.RequestId == "" {
		res, err := e.co.Submit(ctx, connect.NewRequest(sreq))
		if err != nil {
			return nil, wrap("SubmitProof", err)
		}
		return res.Msg, nil
	}
	digest := sha256.Sum256(req.VanillaProof)
	for attempt := 0; attempt <= e.cfg.MaxRetries; attempt++ {
		sreq.IdempotencyKey = idempotencyKey(req.RequestId, digest, attempt)
		res, err := e.co.Submit(ctx, connect.NewRequest(sreq))
		if err != nil {
			return nil, wrap(fmt.Sprintf("SubmitProof (request_id %q)", req.RequestId), err)
		}
		if !res.Msg.Deduplicated {
			return res.Msg, nil
		}
		// The key names an earlier job: return it, unless it failed or was
		// cancelled — then this resubmission is a retry and gets a new job.
		st, err := e.co.Status(ctx, connect.NewRequest(&c2clusterv1.StatusRequest{JobId: res.Msg.JobId}))
		if err != nil {
			return nil, wrap(fmt.Sprintf("SubmitProof (request_id %q): job %s", req.RequestId, res.Msg.JobId), err)
		}
		switch st.Msg.Job.GetState() {
		case c2clusterv1.JobState_JOB_STATE_FAILED, c2clusterv1.JobState_JOB_STATE_CANCELLED:
			e.log.InfoContext(ctx, "cuzk: request_id resubmitted after its job ended; starting a new job",
				slog.String("request_id", req.RequestId), slog.String("earlier_job", res.Msg.JobId),
				slog.String("state", stateName(st.Msg.Job.GetState())), slog.Int("attempt", attempt+1))
			continue
		}
		return res.Msg, nil
	}
	return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
		"SubmitProof: request_id %q with this vanilla_proof already failed or was cancelled %d times; use a new request_id to try again",
		req.RequestId, e.cfg.MaxRetries+1))
}

// idempotencyKey is the coordinator's idempotency key of a request_id, the
// SHA-256 of its vanilla proof and the attempt: "<request_id>/c1:<32 hex
// digits of the digest>", then "/retry:<n>" from the second attempt on. A
// request_id longer than 64 bytes is replaced by "sha256:<its 32 first hex
// digits>", so a key is at most 64+4+32+10 bytes (within the coordinator's
// 128).
//
// So the same request_id with the same C1 output finds its job again, while
// a new C1 output under a request_id (Curio redoes C1 when a reorg changes
// the interactive seed, and keeps "porep-<miner>-<sector>") is a new job
// and never gets the old, now invalid proof back.
func idempotencyKey(requestID string, digest [32]byte, attempt int) string {
	base := requestID
	if len(base) > 64 {
		h := sha256.Sum256([]byte(requestID))
		base = "sha256:" + hex.EncodeToString(h[:16])
	}
	key := base + "/c1:" + hex.EncodeToString(digest[:16])
	if attempt > 0 {
		key += "/retry:" + strconv.Itoa(attempt)
	}
	return key
}

// request checks a SubmitProofRequest and returns the coordinator's
// SubmitRequest (without its idempotency key).
func (e *Engine) request(req *cuzkv1.SubmitProofRequest) (*c2clusterv1.SubmitRequest, error) {
	switch req.ProofKind {
	case cuzkv1.ProofKind_POREP_SEAL_COMMIT:
	case cuzkv1.ProofKind_PROOF_KIND_UNSPECIFIED, cuzkv1.ProofKind_SNAP_DEALS_UPDATE,
		cuzkv1.ProofKind_WINDOW_POST_PARTITION, cuzkv1.ProofKind_WINNING_POST:
		e.log.Warn("cuzk: proof kind not implemented", slog.String("proof_kind", req.ProofKind.String()), slog.String("request_id", req.RequestId))
		return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf(
			"proof_kind %s is not implemented: the c2cluster coordinator proves PoRep C2 only (POREP_SEAL_COMMIT)", req.ProofKind))
	default:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("proof_kind %d is not a cuzk.v1.ProofKind", int32(req.ProofKind)))
	}
	if len(req.VanillaProof) == 0 {
		msg := "vanilla_proof is empty: POREP_SEAL_COMMIT needs the C1 output (SealCommitPhase1Output JSON, or lotus-bench's Commit2In envelope)"
		if len(req.VanillaProofs) > 0 {
			msg += "; vanilla_proofs is for PoSt and SnapDeals"
		}
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New(msg))
	}
	if len(req.VanillaProofs) > 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(
			"vanilla_proofs has %d entries: POREP_SEAL_COMMIT sends its C1 output in vanilla_proof only", len(req.VanillaProofs)))
	}
	prio, ok := lanes[req.Priority]
	if !ok {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("priority %d is not a cuzk.v1.Priority", int32(req.Priority)))
	}
	if err := checkProofType(req); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	sreq := &c2clusterv1.SubmitRequest{C1Json: req.VanillaProof, Priority: prio}
	switch {
	case req.MinerId != 0:
		sreq.Sector = &c2clusterv1.SectorRef{MinerId: proto.Uint64(req.MinerId), SectorNumber: proto.Uint64(req.SectorNumber)}
	case req.SectorNumber != 0:
		sreq.Sector = &c2clusterv1.SectorRef{SectorNumber: proto.Uint64(req.SectorNumber)}
	}
	return sreq, nil
}

// checkProofType checks sector_size and registered_proof (0: not given)
// against the C1 output's proof type, read from the document's
// "registered_proof" (its first key as rust-fil-proofs writes it). A
// document whose proof type cannot be read this way is left to the
// coordinator, which refuses it with the precise reason.
func checkProofType(req *cuzkv1.SubmitProofRequest) error {
	if req.SectorSize == 0 && req.RegisteredProof == 0 {
		return nil
	}
	doc := req.VanillaProof
	if c1.IsCommit2In(doc) {
		env, err := c1.ParseCommit2In(doc)
		if err != nil {
			return nil // the coordinator refuses it, naming the field
		}
		doc = env.Phase1Out
	}
	rp, ok := registeredProofOf(doc)
	if !ok {
		return nil
	}
	s, err := porep.ShapeByRegisteredProof(rp)
	if err != nil {
		return nil // the coordinator refuses an unknown proof type
	}
	if (req.RegisteredProof == 0 || req.RegisteredProof == s.ProofID) && (req.SectorSize == 0 || req.SectorSize == s.SectorSize()) {
		return nil
	}
	return fmt.Errorf("sector_size %d and registered_proof %s do not describe the C1 output in vanilla_proof, which is %s: registered_proof %d, sector_size %d",
		req.SectorSize, registeredProofName(req.RegisteredProof), s.RegisteredProof, s.ProofID, s.SectorSize())
}

// registeredProofOf reads a C1 document's top-level "registered_proof"
// string, skipping the values of any keys before it.
func registeredProofOf(doc []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		if key, _ := t.(string); key == "registered_proof" {
			var rp string
			if err := dec.Decode(&rp); err != nil {
				return "", false
			}
			return rp, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// registeredProofName is a RegisteredSealProof number with its name when
// it is a shape's ("8 (StackedDrg32GiBV1_1)").
func registeredProofName(n uint64) string {
	if n == 0 {
		return "0 (not given)"
	}
	for _, s := range porep.Shapes() {
		if s.ProofID == n {
			return fmt.Sprintf("%d (%s)", n, s.RegisteredProof)
		}
	}
	return strconv.FormatUint(n, 10)
}
