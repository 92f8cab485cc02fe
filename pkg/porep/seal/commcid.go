package seal

import (
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/c2cluster/c2cluster/pkg/porep"
)

// CommitmentKind says which commitment a CID holds.
type CommitmentKind int

const (
	// CommD is the data commitment: a CIDv1 of codec
	// fil-commitment-unsealed (0xf101) and multihash
	// sha2-256-trunc254-padded (0x1012), "baga6ea4seaq…".
	CommD CommitmentKind = iota
	// CommR is the replica commitment: a CIDv1 of codec
	// fil-commitment-sealed (0xf102) and multihash
	// poseidon-bls12_381-a2-fc1 (0xb401), "bagboea4b5abc…".
	CommR
)

// Multicodec codes of Filecoin commitment CIDs (go-fil-commcid).
const (
	codecUnsealed    = 0xf101
	codecSealed      = 0xf102
	mhSHA256Trunc254 = 0x1012
	mhPoseidonFC1    = 0xb401
)

func (k CommitmentKind) String() string {
	if k == CommR {
		return "comm_r"
	}
	return "comm_d"
}

func (k CommitmentKind) codes() (codec, mh uint64) {
	if k == CommR {
		return codecSealed, mhPoseidonFC1
	}
	return codecUnsealed, mhSHA256Trunc254
}

// base32Lower is multibase 'b': RFC 4648 base32, lowercase, no padding.
var base32Lower = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// CommitmentCID returns the CID form of a commitment, as Lotus prints it
// (go-fil-commcid's DataCommitmentV1ToCID / ReplicaCommitmentV1ToCID in
// base32).
func CommitmentCID(kind CommitmentKind, d porep.Domain) string {
	codec, mh := kind.codes()
	b := binary.AppendUvarint(nil, 1) // CIDv1
	b = binary.AppendUvarint(b, codec)
	b = binary.AppendUvarint(b, mh)
	b = binary.AppendUvarint(b, porep.NodeSize)
	b = append(b, d[:]...)
	return "b" + base32Lower.EncodeToString(b)
}

// maxCommitmentText bounds the text ParseCommitment looks at.
const maxCommitmentText = 128

// ParseCommitment reads a commitment of the given kind: the CID Lotus
// prints (CIDcommD "baga6ea4seaq…", CIDcommR "bagboea4b5abc…": CIDv1,
// multibase base32, the kind's codec and multihash, a 32-byte digest) or the
// 32 bytes as 64 hex digits (the stored little-endian order, as older Lotus
// and rust-fil-proofs print them). It does not check that the value is a
// field element (Sector.Statement does, as verify_seal).
func ParseCommitment(kind CommitmentKind, s string) (porep.Domain, error) {
	var d porep.Domain
	s = strings.TrimSpace(s)
	if len(s) > maxCommitmentText {
		return d, fmt.Errorf("seal: %s: %d characters: neither a commitment CID nor 64 hex digits", kind, len(s))
	}
	if h := strings.TrimPrefix(s, "0x"); len(h) == 64 {
		if _, err := hex.Decode(d[:], []byte(h)); err == nil {
			return d, nil
		}
	}
	if !strings.HasPrefix(s, "b") {
		return d, fmt.Errorf("seal: %s %q: want a base32 CID (b…, as Lotus prints it) or 64 hex digits", kind, s)
	}
	raw, err := base32Lower.DecodeString(s[1:])
	if err != nil || base32Lower.EncodeToString(raw) != s[1:] {
		return d, fmt.Errorf("seal: %s %q: not canonical lowercase base32", kind, s)
	}
	next := func(what string) (uint64, error) {
		v, n := binary.Uvarint(raw)
		if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
			return 0, fmt.Errorf("seal: %s %q: bad varint (%s)", kind, s, what)
		}
		raw = raw[n:]
		return v, nil
	}
	version, err := next("version")
	if err != nil {
		return d, err
	}
	if version != 1 {
		return d, fmt.Errorf("seal: %s %q: CID version %d, want 1", kind, s, version)
	}
	codec, err := next("codec")
	if err != nil {
		return d, err
	}
	mh, err := next("multihash")
	if err != nil {
		return d, err
	}
	size, err := next("digest length")
	if err != nil {
		return d, err
	}
	wantCodec, wantMH := kind.codes()
	if codec != wantCodec || mh != wantMH {
		other := CommD
		if kind == CommD {
			other = CommR
		}
		if oc, om := other.codes(); codec == oc && om == mh {
			return d, fmt.Errorf("seal: %s %q is a %s CID", kind, s, other)
		}
		return d, fmt.Errorf("seal: %s %q: codec 0x%x multihash 0x%x, want 0x%x and 0x%x", kind, s, codec, mh, wantCodec, wantMH)
	}
	if size != porep.NodeSize || len(raw) != porep.NodeSize {
		return d, fmt.Errorf("seal: %s %q: digest of %d bytes (%d given), want %d", kind, s, size, len(raw), porep.NodeSize)
	}
	copy(d[:], raw)
	return d, nil
}
