package c1

import (
	"errors"
	"fmt"
)

// ErrTooLarge is returned when the input exceeds the size limit.
var ErrTooLarge = errors.New("c1: input exceeds size limit")

// FormatError says what is wrong in a C1 document and where: Path is the
// JSON path (e.g. "vanilla_proofs.StackedDrg2KiBV1[0][1].labeling_proofs[0].parents");
// Offset, when known, is the byte offset the JSON decoder reached.
type FormatError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *FormatError) Error() string {
	s := "c1: "
	if e.Path != "" {
		s += e.Path + ": "
	}
	s += e.Reason
	if e.Offset > 0 {
		s += fmt.Sprintf(" (near byte %d)", e.Offset)
	}
	return s
}

func formatErr(path, format string, a ...any) error {
	return &FormatError{Path: path, Reason: fmt.Sprintf(format, a...)}
}
