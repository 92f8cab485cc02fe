package seal_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/c2cluster/c2cluster/pkg/porep"
	"github.com/c2cluster/c2cluster/pkg/porep/seal"
)

// leb128 is an unsigned LEB128 encoder written out here, the oracle for
// ProverID: 7 bits at a time, low first, the high bit set on all but the
// last byte.
func leb128(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// TestProverID: known answers of the ID-address payload and the padded
// 32-byte prover id.
func TestProverID(t *testing.T) {
	for id, want := range map[uint64]string{
		0:         "00",
		1:         "01",
		127:       "7f",
		128:       "8001",
		1000:      "e807",
		1001:      "e907",
		16384:     "808001",
		1<<63 - 1: "ffffffffffffffff7f",
	} {
		got := seal.ProverID(id)
		b, _ := hex.DecodeString(want)
		require.Equal(t, b, leb128(id), "oracle for %d", id)
		require.Equal(t, want, hex.EncodeToString(got[:len(b)]), "actor %d", id)
		require.Equal(t, make([]byte, 32-len(b)), got[len(b):], "zero padding of actor %d", id)
	}
	for _, id := range []uint64{2, 300, 65535, 1 << 20, 123456789, 1<<62 + 5} {
		got := seal.ProverID(id)
		var want [32]byte
		copy(want[:], leb128(id))
		require.Equal(t, want, got, "actor %d", id)
	}
}

func TestParseMinerID(t *testing.T) {
	for in, want := range map[string]uint64{
		"f01000": 1000, "t01000": 1000, "1000": 1000, "f00": 0, "0": 0, "t0127771": 127771,
		"f09223372036854775807": 1<<63 - 1,
	} {
		got, err := seal.ParseMinerID(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{
		"f1abcdefg":             "not an ID address",
		"f3abc":                 "not an ID address",
		"f0":                    "no actor id",
		"":                      "no actor id",
		"f0x12":                 "want f0<id>",
		"-5":                    "want f0<id>",
		"f001":                  "leading zero",
		"f09223372036854775808": "above 2^63−1",
		"99999999999999999999":  "above 2^63−1",
		"F01000":                "want f0<id>",
	} {
		_, err := seal.ParseMinerID(in)
		require.ErrorContains(t, err, msg, in)
	}
}

func TestParseBytes32(t *testing.T) {
	h := strings.Repeat("ab", 32)
	b, err := seal.ParseBytes32("ticket", h)
	require.NoError(t, err)
	require.Equal(t, byte(0xab), b[31])
	b2, err := seal.ParseBytes32("ticket", "0x"+strings.ToUpper(h))
	require.NoError(t, err)
	require.Equal(t, b, b2)
	_, err = seal.ParseBytes32("seed", h[:62])
	require.ErrorContains(t, err, "seed: 62 hex digits, want 64")
	_, err = seal.ParseBytes32("seed", h[:62]+"zz")
	require.ErrorContains(t, err, "seed: encoding/hex: invalid byte")
}

// zeroCommD is the data commitment of a sector of zeros of 2^levels nodes:
// SHA-256 of the two children, its top two bits cleared, from zero leaves.
func zeroCommD(levels int) porep.Domain {
	var d porep.Domain
	for range levels {
		h := sha256.Sum256(append(d[:], d[:]...))
		copy(d[:], h[:])
		d.TruncateTo254()
	}
	return d
}

// TestCommitmentCID: the CID forms of known commitments (the comm_d of
// empty 2 KiB and 32 GiB sectors, as Lotus shows them for committed-capacity
// sectors), the prefixes of both kinds, round trips and the hex form.
func TestCommitmentCID(t *testing.T) {
	for _, tc := range []struct {
		levels int
		cid    string
	}{
		{6, "baga6ea4seaqpy7usqklokfx2vxuynmupslkeutzexe2uqurdg5vhtebhxqmpqmy"},
		{30, "baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq"},
	} {
		d := zeroCommD(tc.levels)
		require.Equal(t, tc.cid, seal.CommitmentCID(seal.CommD, d), "2^%d zero nodes", tc.levels)
		got, err := seal.ParseCommitment(seal.CommD, tc.cid)
		require.NoError(t, err)
		require.Equal(t, d, got)
	}
	d := porep.Domain{0x8c, 0x7b, 0x78, 0xab, 31: 0x0a}
	for kind, prefix := range map[seal.CommitmentKind]string{seal.CommD: "baga6ea4seaq", seal.CommR: "bagboea4b5abc"} {
		c := seal.CommitmentCID(kind, d)
		require.True(t, strings.HasPrefix(c, prefix), c)
		got, err := seal.ParseCommitment(kind, c)
		require.NoError(t, err)
		require.Equal(t, d, got)
		got, err = seal.ParseCommitment(kind, d.String())
		require.NoError(t, err, "hex")
		require.Equal(t, d, got)
		got, err = seal.ParseCommitment(kind, " 0x"+d.String()+"\n")
		require.NoError(t, err, "0x hex")
		require.Equal(t, d, got)
	}
	cr := seal.CommitmentCID(seal.CommR, d)
	cd := seal.CommitmentCID(seal.CommD, d)
	for _, tc := range []struct {
		kind seal.CommitmentKind
		in   string
		msg  string
	}{
		{seal.CommD, cr, "is a comm_r CID"},
		{seal.CommR, cd, "is a comm_d CID"},
		{seal.CommD, "B" + cd[1:], "want a base32 CID"},
		{seal.CommD, rawCID([]byte{1, 0x81, 0xe2, 3, 0x92, 0x20, 0x20}, d[:31]), "digest of 32 bytes (31 given)"},
		{seal.CommD, rawCID([]byte{1, 0x81, 0xe2, 3, 0x92, 0x20, 0x20}, append(d[:], 0)), "digest of 32 bytes (33 given)"},
		{seal.CommD, rawCID([]byte{1, 0x81, 0xe2, 3, 0x92, 0x20, 0x21}, d[:]), "digest of 33 bytes"},
		{seal.CommD, rawCID([]byte{0, 0x81, 0xe2, 3, 0x92, 0x20, 0x20}, d[:]), "CID version 0, want 1"},
		{seal.CommD, rawCID([]byte{1, 0x81, 0xe2, 0x83, 0x00, 0x92, 0x20, 0x20}, d[:]), "bad varint (codec)"},
		{seal.CommD, rawCID([]byte{1, 0x81}, nil), "bad varint (codec)"},
		{seal.CommD, cd + "a", "digest of 32 bytes (33 given)"},
		{seal.CommD, cd[:len(cd)-1] + nextBase32(cd[len(cd)-1]), "not canonical lowercase base32"},
		{seal.CommD, "b" + strings.ToUpper(cd[1:]), "not canonical lowercase base32"},
		{seal.CommD, "bafkqaaa", "codec 0x55"},
		{seal.CommD, "QmWceMgnWYLopMuM4AoGMvGEau7tNe5UK83XFjH5V9B17h", "want a base32 CID"},
		{seal.CommD, strings.Repeat("0", 63), "want a base32 CID"},
		{seal.CommD, strings.Repeat("b", 200), "200 characters"},
		{seal.CommD, "", "want a base32 CID"},
	} {
		_, err := seal.ParseCommitment(tc.kind, tc.in)
		require.ErrorContains(t, err, tc.msg, "%s %q", tc.kind, tc.in)
	}
}

// nextBase32 is the base32 digit after c: in a CID's last digit it sets
// one of the unused low bits.
func nextBase32(c byte) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	return string(alphabet[strings.IndexByte(alphabet, c)+1])
}

// rawCID is "b" and the base32 of head ‖ digest, built without the code
// under test.
func rawCID(head, digest []byte) string {
	enc := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	return "b" + enc.EncodeToString(append(bytes.Clone(head), digest...))
}

// FuzzParseCommitment: no input panics; every accepted CID is the canonical
// form of what it decodes to.
func FuzzParseCommitment(f *testing.F) {
	d := porep.Domain{1, 2, 3, 31: 4}
	f.Add(seal.CommitmentCID(seal.CommD, d), false)
	f.Add(seal.CommitmentCID(seal.CommR, d), true)
	f.Add(d.String(), false)
	f.Add("bafkqaaa", true)
	f.Add("b", false)
	f.Fuzz(func(t *testing.T, s string, r bool) {
		kind := seal.CommD
		if r {
			kind = seal.CommR
		}
		got, err := seal.ParseCommitment(kind, s)
		if err != nil {
			return
		}
		trimmed := strings.TrimSpace(s)
		if strings.HasPrefix(trimmed, "b") && len(strings.TrimPrefix(trimmed, "0x")) != 64 {
			require.Equal(t, trimmed, seal.CommitmentCID(kind, got))
		}
	})
}

// FuzzParseMinerID: no input panics; an accepted id prints back as the
// input's digits.
func FuzzParseMinerID(f *testing.F) {
	for _, s := range []string{"f01000", "t0", "1000", "f1abc", "f00", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := seal.ParseMinerID(s)
		if err != nil {
			return
		}
		require.True(t, s == fmt.Sprint(id) || s == fmt.Sprintf("f0%d", id) || s == fmt.Sprintf("t0%d", id), "%q → %d", s, id)
	})
}
