package seal

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// ProverID is the prover id of a miner actor (porep.ProverID).
func ProverID(actorID uint64) [32]byte { return porep.ProverID(actorID) }

// maxActorID is the largest id of an ID address (63 bits).
const maxActorID = 1<<63 - 1

// ParseMinerID reads a miner's actor id: an ID address ("f01000" on
// mainnet, "t01000" on test networks) or the bare number ("1000"). Other
// address kinds (f1, f2, f3, f4) are refused: only an ID address names the
// actor directly.
func ParseMinerID(s string) (uint64, error) {
	digits := s
	if len(s) >= 2 && (s[0] == 'f' || s[0] == 't') {
		if s[1] != '0' {
			return 0, fmt.Errorf("seal: miner %q is not an ID address (f0…/t0…): look its ID up (lotus state lookup %s)", s, s)
		}
		digits = s[2:]
	}
	if digits == "" {
		return 0, fmt.Errorf("seal: miner %q has no actor id", s)
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, fmt.Errorf("seal: miner %q: want f0<id>, t0<id> or a decimal actor id", s)
		}
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, fmt.Errorf("seal: miner %q: actor id with a leading zero", s)
	}
	id, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || id > maxActorID {
		return 0, fmt.Errorf("seal: miner %q: actor id above 2^63−1", s)
	}
	return id, nil
}

// ParseBytes32 reads 32 bytes given as 64 hex digits (an optional 0x
// prefix), as Lotus prints tickets, seeds and prover ids.
func ParseBytes32(what, s string) ([32]byte, error) {
	var out [32]byte
	h := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	if len(h) != 64 {
		return out, fmt.Errorf("seal: %s: %d hex digits, want 64 (32 bytes)", what, len(h))
	}
	if _, err := hex.Decode(out[:], []byte(h)); err != nil {
		return out, fmt.Errorf("seal: %s: %v", what, err)
	}
	return out, nil
}
