package groth16

import (
	"crypto/sha256"
	"encoding/hex"
)

// Fingerprint identifies a verifying key: "sha256:" and the hex SHA-256 of
// the key in bellperson's .vk layout (WriteVerifyingKey), which is the .vk
// file's bytes and the first section of the .params file. Two parameter
// sets from different setups of one circuit have different fingerprints;
// a .params file and the .vk made beside it have the same.
func (vk *VerifyingKey) Fingerprint() string {
	h := sha256.New()
	if err := WriteVerifyingKey(h, vk); err != nil {
		return "invalid: " + err.Error()
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
