package groth16

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// PreparedVerifyingKey is a verifying key with the pairing-side
// precomputations done once: e(α, β) and the Miller-loop lines of −γ and −δ
// (and of β for batches). It is safe for concurrent use.
type PreparedVerifyingKey struct {
	vk         VerifyingKey
	alphaBeta  curve.GT
	linesGamma [2][len(curve.LoopCounter) - 1]curve.LineEvaluationAff
	linesDelta [2][len(curve.LoopCounter) - 1]curve.LineEvaluationAff
	linesBeta  [2][len(curve.LoopCounter) - 1]curve.LineEvaluationAff
}

// PrepareVerifyingKey checks vk (every point on the curve and in the
// subgroup, non-empty IC) and precomputes its pairing data.
func PrepareVerifyingKey(vk *VerifyingKey) (*PreparedVerifyingKey, error) {
	if err := checkVerifyingKey(vk); err != nil {
		return nil, err
	}
	p := &PreparedVerifyingKey{vk: *vk}
	var err error
	if p.alphaBeta, err = curve.Pair([]curve.G1Affine{vk.AlphaG1}, []curve.G2Affine{vk.BetaG2}); err != nil {
		return nil, fmt.Errorf("groth16: prepare vk: %w", err)
	}
	var gNeg, dNeg curve.G2Affine
	gNeg.Neg(&vk.GammaG2)
	dNeg.Neg(&vk.DeltaG2)
	p.linesGamma = curve.PrecomputeLines(gNeg)
	p.linesDelta = curve.PrecomputeLines(dNeg)
	p.linesBeta = curve.PrecomputeLines(vk.BetaG2)
	return p, nil
}

// VerifyingKey returns a copy of the key that was prepared.
func (p *PreparedVerifyingKey) VerifyingKey() VerifyingKey { return p.vk }

func checkVerifyingKey(vk *VerifyingKey) error {
	if vk == nil {
		return fmt.Errorf("%w: nil verifying key", ErrShape)
	}
	if len(vk.IC) == 0 {
		return fmt.Errorf("%w: verifying key has no ic", ErrShape)
	}
	for i, p := range []*curve.G1Affine{&vk.AlphaG1, &vk.BetaG1, &vk.DeltaG1} {
		if !p.IsInSubGroup() {
			return fmt.Errorf("groth16: verifying key G1 point %d: %w", i, ErrNotInSubgroup)
		}
	}
	for i, p := range []*curve.G2Affine{&vk.BetaG2, &vk.GammaG2, &vk.DeltaG2} {
		if !p.IsInSubGroup() {
			return fmt.Errorf("groth16: verifying key G2 point %d: %w", i, ErrNotInSubgroup)
		}
	}
	for i := range vk.IC {
		if !vk.IC[i].IsInSubGroup() {
			return fmt.Errorf("groth16: verifying key ic[%d]: %w", i, ErrNotInSubgroup)
		}
	}
	return nil
}

// checkProof rejects proof elements at infinity or outside the subgroups
// (a decoded proof already passed these checks; a Proof built in memory may
// not have).
func checkProof(p *Proof) error {
	if p == nil {
		return fmt.Errorf("%w: nil proof", ErrShape)
	}
	if p.A.IsInfinity() || p.B.IsInfinity() || p.C.IsInfinity() {
		return fmt.Errorf("%w: %w", ErrInvalidProof, ErrInfinity)
	}
	if !p.A.IsInSubGroup() || !p.B.IsInSubGroup() || !p.C.IsInSubGroup() {
		return fmt.Errorf("%w: %w", ErrInvalidProof, ErrNotInSubgroup)
	}
	return nil
}

// publicPoint returns IC[0] + Σ inputs[i]·IC[i+1].
func publicPoint(vk *VerifyingKey, inputs []fr.Element) (curve.G1Affine, error) {
	var acc curve.G1Affine
	if len(inputs)+1 != len(vk.IC) {
		return acc, fmt.Errorf("%w: %d public inputs, verifying key takes %d", ErrShape, len(inputs), len(vk.IC)-1)
	}
	var j curve.G1Jac
	if len(inputs) > 0 {
		if _, err := j.MultiExp(vk.IC[1:], inputs, ecc.MultiExpConfig{NbTasks: 1}); err != nil {
			return acc, fmt.Errorf("groth16: verify: %w", err)
		}
	} else {
		j.Z.SetZero()
		j.X.SetOne()
		j.Y.SetOne()
	}
	j.AddMixed(&vk.IC[0])
	acc.FromJacobian(&j)
	return acc, nil
}

// Verify checks one proof. inputs are the public inputs WITHOUT the leading
// constant one, as Filecoin passes them. It returns nil for a valid proof,
// an error wrapping ErrInvalidProof for an invalid one and ErrShape for a
// wrong number of inputs.
func (p *PreparedVerifyingKey) Verify(proof *Proof, inputs []fr.Element) error {
	if err := checkProof(proof); err != nil {
		return err
	}
	pub, err := publicPoint(&p.vk, inputs)
	if err != nil {
		return err
	}
	// e(A, B) · e(pub, −γ) · e(C, −δ) == e(α, β)
	ml, err := curve.MillerLoop([]curve.G1Affine{proof.A}, []curve.G2Affine{proof.B})
	if err != nil {
		return fmt.Errorf("groth16: verify: %w", err)
	}
	mlf, err := curve.MillerLoopFixedQ([]curve.G1Affine{pub, proof.C},
		[][2][len(curve.LoopCounter) - 1]curve.LineEvaluationAff{p.linesGamma, p.linesDelta})
	if err != nil {
		return fmt.Errorf("groth16: verify: %w", err)
	}
	ml.Mul(&ml, &mlf)
	res := curve.FinalExponentiation(&ml)
	if !res.Equal(&p.alphaBeta) {
		return ErrInvalidProof
	}
	return nil
}

// Verify checks one proof against vk; see PreparedVerifyingKey.Verify. It
// does one four-pair pairing check and needs no preparation; verifying many
// proofs of one key is faster through PrepareVerifyingKey.
func Verify(vk *VerifyingKey, proof *Proof, inputs []fr.Element) error {
	if vk == nil || len(vk.IC) == 0 {
		return fmt.Errorf("%w: verifying key has no ic", ErrShape)
	}
	if err := checkProof(proof); err != nil {
		return err
	}
	pub, err := publicPoint(vk, inputs)
	if err != nil {
		return err
	}
	var alphaNeg curve.G1Affine
	alphaNeg.Neg(&vk.AlphaG1)
	var pubNeg, cNeg curve.G1Affine
	pubNeg.Neg(&pub)
	cNeg.Neg(&proof.C)
	ok, err := curve.PairingCheck(
		[]curve.G1Affine{proof.A, alphaNeg, pubNeg, cNeg},
		[]curve.G2Affine{proof.B, vk.BetaG2, vk.GammaG2, vk.DeltaG2})
	if err != nil {
		return fmt.Errorf("groth16: verify: %w", err)
	}
	if !ok {
		return ErrInvalidProof
	}
	return nil
}

// InvalidProofsError is returned by VerifyBatch when the batch fails: it
// lists the indexes of the proofs that fail on their own.
type InvalidProofsError struct {
	Indexes []int
	Errs    []error
}

func (e *InvalidProofsError) Error() string {
	return fmt.Sprintf("groth16: %d of the batch's proofs are invalid, indexes %v: first: %v", len(e.Indexes), e.Indexes, e.Errs[0])
}

func (e *InvalidProofsError) Unwrap() error { return ErrInvalidProof }

// VerifyBatch checks many proofs of this key at once (e.g. the partition
// proofs of one sector): with random 128-bit weights ρ_i it checks
//
//	Π e(ρ_i·A_i, B_i) · e(−(Σρ_i)·α, β) · e(Σρ_i·pub_i, −γ) · e(Σρ_i·C_i, −δ) = 1
//
// with one multi-Miller loop and one final exponentiation. inputs[i] are the
// public inputs of proofs[i] without the leading one. If the batch fails,
// every proof is checked on its own and the result is an
// *InvalidProofsError naming the bad ones (it matches ErrInvalidProof).
func (p *PreparedVerifyingKey) VerifyBatch(proofs []*Proof, inputs [][]fr.Element) error {
	if len(proofs) != len(inputs) {
		return fmt.Errorf("%w: %d proofs but %d input vectors", ErrShape, len(proofs), len(inputs))
	}
	if len(proofs) == 0 {
		return fmt.Errorf("%w: empty batch", ErrShape)
	}
	nIC := len(p.vk.IC)
	for i := range proofs {
		if len(inputs[i])+1 != nIC {
			return fmt.Errorf("%w: proof %d has %d public inputs, verifying key takes %d", ErrShape, i, len(inputs[i]), nIC-1)
		}
	}
	ok, err := p.batchCheck(proofs, inputs)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	// Find the culprits.
	bad := &InvalidProofsError{}
	errs := make([]error, len(proofs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range proofs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			errs[i] = p.Verify(proofs[i], inputs[i])
			<-sem
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != nil {
			bad.Indexes = append(bad.Indexes, i)
			bad.Errs = append(bad.Errs, e)
		}
	}
	if len(bad.Indexes) == 0 {
		// Cannot happen unless the weights were drawn badly; report it.
		return errors.New("groth16: batch check failed but every proof verifies alone")
	}
	return bad
}

func (p *PreparedVerifyingKey) batchCheck(proofs []*Proof, inputs [][]fr.Element) (bool, error) {
	n := len(proofs)
	rho := make([]fr.Element, n)
	var buf [16]byte
	for i := range rho {
		if _, err := rand.Read(buf[:]); err != nil {
			return false, fmt.Errorf("groth16: batch verify: randomness: %w", err)
		}
		rho[i].SetBytes(buf[:])
		if rho[i].IsZero() {
			rho[i].SetOne()
		}
	}
	for _, pr := range proofs {
		if err := checkProof(pr); err != nil {
			return false, nil
		}
	}
	// ρ_i·A_i
	as := make([]curve.G1Affine, n)
	bs := make([]curve.G2Affine, n)
	cs := make([]curve.G1Affine, n)
	for i, pr := range proofs {
		var r big.Int
		rho[i].BigInt(&r)
		as[i].ScalarMultiplication(&pr.A, &r)
		bs[i] = pr.B
		cs[i] = pr.C
	}
	var sumC curve.G1Affine
	if _, err := sumC.MultiExp(cs, rho, ecc.MultiExpConfig{NbTasks: 1}); err != nil {
		return false, fmt.Errorf("groth16: batch verify: %w", err)
	}
	// Σρ_i·pub_i = (Σρ_i)·IC[0] + Σ_j (Σ_i ρ_i·x_ij)·IC[j+1]
	nIC := len(p.vk.IC)
	w := make([]fr.Element, nIC)
	var t fr.Element
	for i := range proofs {
		w[0].Add(&w[0], &rho[i])
		for j, x := range inputs[i] {
			t.Mul(&rho[i], &x)
			w[j+1].Add(&w[j+1], &t)
		}
	}
	var sumPub curve.G1Affine
	if _, err := sumPub.MultiExp(p.vk.IC, w, ecc.MultiExpConfig{NbTasks: 1}); err != nil {
		return false, fmt.Errorf("groth16: batch verify: %w", err)
	}
	var alphaW curve.G1Affine
	var sumRho big.Int
	w[0].BigInt(&sumRho)
	alphaW.ScalarMultiplication(&p.vk.AlphaG1, &sumRho)
	alphaW.Neg(&alphaW)

	ml, err := curve.MillerLoop(as, bs)
	if err != nil {
		return false, fmt.Errorf("groth16: batch verify: %w", err)
	}
	mlf, err := curve.MillerLoopFixedQ([]curve.G1Affine{alphaW, sumPub, sumC},
		[][2][len(curve.LoopCounter) - 1]curve.LineEvaluationAff{p.linesBeta, p.linesGamma, p.linesDelta})
	if err != nil {
		return false, fmt.Errorf("groth16: batch verify: %w", err)
	}
	ml.Mul(&ml, &mlf)
	res := curve.FinalExponentiation(&ml)
	var one curve.GT
	one.SetOne()
	return res.Equal(&one), nil
}
