package verifier

import "fmt"

// Check names one verification step.
type Check string

// The checks, in the order they run for a challenge.
const (
	CheckShape         Check = "shape"            // document does not fit its shape
	CheckReplicaID     Check = "replica id"       // replica_id ≠ derivation from identity
	CheckChallenge     Check = "challenge index"  // a node index differs from the derived challenge
	CheckCommDRoot     Check = "comm_d root"      // tree D proof root ≠ comm_d
	CheckCommDPath     Check = "comm_d path"      // tree D path does not hash to its root
	CheckCommRLastRoot Check = "comm_r_last root" // tree R_last roots differ between proofs
	CheckCommRLastPath Check = "comm_r_last path" // tree R_last path does not hash to its root
	CheckColumnIndex   Check = "column index"     // a column's index or path ≠ its node
	CheckParents       Check = "parents"          // parent columns ≠ graph parents
	CheckCommCRoot     Check = "comm_c root"      // tree C roots differ between columns/proofs
	CheckColumnPath    Check = "column path"      // column hash or tree C path does not lead to comm_c
	CheckLabelIndex    Check = "labeling index"   // labeling/encoding proof layer or node wrong
	CheckLabelParents  Check = "labeling parents" // labeling proof parents ≠ opened parent labels
	CheckLabel         Check = "label"            // recomputed label ≠ column row
	CheckEncoding      Check = "encoding"         // data + key ≠ replica node
	CheckCommR         Check = "comm_r"           // Poseidon(comm_c, comm_r_last) ≠ comm_r
	CheckFieldElement  Check = "field element"    // a Poseidon-domain value is not canonical
)

// Error is a failed check. Partition and Challenge are -1 when the failure
// is not about one challenge proof.
type Error struct {
	Partition int
	Challenge int
	Node      uint64 // the challenged node, when known
	Check     Check
	Detail    string
}

func (e *Error) Error() string {
	where := ""
	switch {
	case e.Partition >= 0 && e.Challenge >= 0:
		where = fmt.Sprintf("partition %d challenge %d (node %d): ", e.Partition, e.Challenge, e.Node)
	case e.Partition >= 0:
		where = fmt.Sprintf("partition %d: ", e.Partition)
	}
	return fmt.Sprintf("verifier: %s%s check failed: %s", where, e.Check, e.Detail)
}
