package groth16

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"golang.org/x/crypto/blake2b"
)

// An H file holds what converting a monomial key to HCosetLagrange form
// changes (ConvertHCosetLagrange): the H, L and LInput queries, in a
// layout of c2cluster's own. The rest of the key (the verifying key, A,
// B_G1, B_G2) stays in the source .params file the file names by digest.
//
//	magic       16 bytes  "c2cluster hfile\n"
//	format      u32 BE    1
//	domain      u32 BE    n: points of h
//	inputs      u32 BE    points of l_input
//	aux         u32 BE    points of l
//	source size u64 BE    bytes of the source .params file
//	source      64 bytes  the source file's digest, ASCII, zero padded
//	h, l, l_input         uncompressed G1 points (96 bytes each, as .params)
//	digest      32 bytes  BLAKE2b-256 of the header and of the BLAKE2b-256
//	                      of each 16 MiB block of the points, in order
//
// The digest covers every byte before it; its block structure lets a
// reader hash a large file on all cores.
const (
	hFileMagic     = "c2cluster hfile\n"
	hFileFormat    = 1
	hFileHeader    = 16 + 4*4 + 8 + 64
	hFileDigest    = 32
	hFileBlock     = 16 << 20
	hFileSourceLen = 64
)

// SectionHeader and SectionLInput name an H file's header and its l_input
// section in FormatError.
const (
	SectionHeader = "header"
	SectionLInput = "l_input"
)

// ErrFileDigest: a file's content does not match the digest it carries
// (damaged or altered).
var ErrFileDigest = errors.New("groth16: the file's digest does not match its content (damaged or altered)")

// HFileHeader is an H file's header: its counts and the source .params
// file it was converted from.
type HFileHeader struct {
	Domain, Inputs, Aux int
	// SourceSize and SourceDigest identify the source .params file (the
	// digest as the caller computes it: Filecoin's rule for its files).
	SourceSize   int64
	SourceDigest string
}

// Size is the length of an H file with these counts.
func (h *HFileHeader) Size() int64 {
	return hFileHeader + int64(h.Domain+h.Inputs+h.Aux)*g1Uncompressed + hFileDigest
}

// HFile is a decoded H file.
type HFile struct {
	HFileHeader
	// Digest is the file's own digest (hex).
	Digest       string
	H, L, LInput []curve.G1Affine
}

func (h *HFileHeader) encode() ([]byte, error) {
	if len(h.SourceDigest) == 0 || len(h.SourceDigest) > hFileSourceLen {
		return nil, fmt.Errorf("source digest %q: want 1 to %d characters", h.SourceDigest, hFileSourceLen)
	}
	for _, n := range []int{h.Domain, h.Inputs, h.Aux} {
		if n < 0 || int64(n) > math.MaxUint32 {
			return nil, fmt.Errorf("count %d does not fit a u32", n)
		}
	}
	b := make([]byte, hFileHeader)
	copy(b, hFileMagic)
	binary.BigEndian.PutUint32(b[16:], hFileFormat)
	binary.BigEndian.PutUint32(b[20:], uint32(h.Domain))
	binary.BigEndian.PutUint32(b[24:], uint32(h.Inputs))
	binary.BigEndian.PutUint32(b[28:], uint32(h.Aux))
	binary.BigEndian.PutUint64(b[32:], uint64(h.SourceSize))
	copy(b[40:], h.SourceDigest)
	return b, nil
}

// parseHFileHeader reads a header and checks it against the file size.
func parseHFileHeader(b []byte, size int64) (*HFileHeader, error) {
	bad := func(off int64, err error) error {
		return &FormatError{Section: SectionHeader, Index: -1, Offset: off, Err: err}
	}
	if size < hFileHeader+hFileDigest || len(b) < hFileHeader {
		return nil, bad(0, fmt.Errorf("%w: %d bytes, an H file has at least %d", ErrTruncated, size, hFileHeader+hFileDigest))
	}
	if string(b[:16]) != hFileMagic {
		return nil, bad(0, fmt.Errorf("%w: not an H file (magic %q)", ErrShape, b[:16]))
	}
	if f := binary.BigEndian.Uint32(b[16:]); f != hFileFormat {
		return nil, bad(16, fmt.Errorf("%w: H file format %d, this build reads %d", ErrShape, f, hFileFormat))
	}
	h := &HFileHeader{
		Domain: int(binary.BigEndian.Uint32(b[20:])), Inputs: int(binary.BigEndian.Uint32(b[24:])),
		Aux: int(binary.BigEndian.Uint32(b[28:])), SourceSize: int64(binary.BigEndian.Uint64(b[32:])),
		SourceDigest: string(bytes.TrimRight(b[40:40+hFileSourceLen], "\x00")),
	}
	if h.Domain < 2 || h.Domain&(h.Domain-1) != 0 {
		return nil, bad(20, fmt.Errorf("%w: domain %d is not a power of two", ErrShape, h.Domain))
	}
	if h.Inputs < 1 {
		return nil, bad(24, fmt.Errorf("%w: %d inputs (ONE is one)", ErrShape, h.Inputs))
	}
	if want := h.Size(); want != size {
		err := ErrTruncated
		if size > want {
			err = ErrTrailingData
		}
		return nil, bad(0, fmt.Errorf("%w: the header's counts make %d bytes, the file has %d", err, want, size))
	}
	return h, nil
}

// blockHasher hashes what is written to it in blocks of hFileBlock bytes,
// keeping each block's BLAKE2b-256.
type blockHasher struct {
	cur  hash.Hash
	n    int
	sums []byte
}

func newBlockHasher() *blockHasher {
	h, _ := blake2b.New256(nil)
	return &blockHasher{cur: h}
}

func (b *blockHasher) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		k := min(len(p), hFileBlock-b.n)
		b.cur.Write(p[:k])
		b.n += k
		p = p[k:]
		if b.n == hFileBlock {
			b.sums = b.cur.Sum(b.sums)
			b.cur.Reset()
			b.n = 0
		}
	}
	return total, nil
}

// digest finishes: BLAKE2b-256 of header ‖ the block sums.
func (b *blockHasher) digest(header []byte) []byte {
	if b.n > 0 {
		b.sums = b.cur.Sum(b.sums)
		b.n = 0
	}
	return hFileTop(header, b.sums)
}

func hFileTop(header, sums []byte) []byte {
	h, _ := blake2b.New256(nil)
	h.Write(header)
	h.Write(sums)
	return h.Sum(nil)
}

// WriteHFile writes the H, L and LInput queries of pk (HCosetLagrange
// form) to path as an H file bound to its source .params file (its size
// and digest), through a temporary file renamed into place. It returns
// the file's digest (hex).
func WriteHFile(path string, pk *ProvingKey, sourceSize int64, sourceDigest string) (string, error) {
	if pk == nil || pk.HForm != HCosetLagrange {
		return "", fmt.Errorf("groth16: write h file: %w: want a key in coset-lagrange form", ErrShape)
	}
	if len(pk.LInput) != len(pk.VK.IC) || len(pk.H) < 2 || len(pk.H)&(len(pk.H)-1) != 0 {
		return "", fmt.Errorf("groth16: write h file: %w: h has %d points (want a power of two), l_input %d (want %d, one per input)",
			ErrShape, len(pk.H), len(pk.LInput), len(pk.VK.IC))
	}
	hdr := HFileHeader{Domain: len(pk.H), Inputs: len(pk.LInput), Aux: len(pk.L), SourceSize: sourceSize, SourceDigest: sourceDigest}
	head, err := hdr.encode()
	if err != nil {
		return "", fmt.Errorf("groth16: write h file: %w", err)
	}
	var digest []byte
	err = writeFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := bw.Write(head); err != nil {
			return err
		}
		bh := newBlockHasher()
		body := io.MultiWriter(bw, bh)
		buf := make([]byte, encodeChunk*g1Uncompressed)
		for _, s := range []struct {
			name string
			pts  []curve.G1Affine
		}{{SectionH, pk.H}, {SectionL, pk.L}, {SectionLInput, pk.LInput}} {
			if err := encodePoints(body, s.pts, g1Uncompressed, func(p *curve.G1Affine, out []byte) {
				b := p.RawBytes()
				copy(out, b[:])
			}, s.name, buf); err != nil {
				return err
			}
		}
		digest = bh.digest(head)
		if _, err := bw.Write(digest); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(digest), nil
}

// ReadHFileHeader reads the header of the H file at path and checks it
// against the file's size; it reads no point.
func ReadHFileHeader(path string) (*HFileHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("groth16: h file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("groth16: h file: %w", err)
	}
	b := make([]byte, hFileHeader)
	n, _ := io.ReadFull(f, b)
	h, err := parseHFileHeader(b[:n], st.Size())
	if err != nil {
		return nil, fmt.Errorf("groth16: h file %s: %w", path, err)
	}
	return h, nil
}

// ReadHFile maps the H file at path, checks its header against its size
// and its digest against its content (ErrFileDigest: damaged), and
// decodes its points with all cores, each checked for its flags,
// canonical coordinates and the curve equation. Subgroup membership is
// not checked: the points are sums of multiples of checked points, and
// the digest says they are those written. Progress (ParamsProgress) is
// reported under "h file: digest" in bytes and "h file: decode" in points.
func ReadHFile(ctx context.Context, path string, opts ...ParamsOption) (*HFile, error) {
	cfg := newParamsConfig(opts)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("groth16: h file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("groth16: h file: %w", err)
	}
	if st.Size() < hFileHeader+hFileDigest || st.Size() > math.MaxInt {
		_, err := parseHFileHeader(nil, st.Size())
		if err == nil {
			err = fmt.Errorf("file too large to map")
		}
		return nil, fmt.Errorf("groth16: h file %s: %w", path, err)
	}
	data, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("groth16: h file %s: map: %w", path, err)
	}
	defer unmap()
	out, err := decodeHFile(ctx, data, cfg)
	if err != nil {
		return nil, fmt.Errorf("groth16: h file %s: %w", path, err)
	}
	return out, nil
}

func decodeHFile(ctx context.Context, data []byte, cfg paramsConfig) (*HFile, error) {
	h, err := parseHFileHeader(data, int64(len(data)))
	if err != nil {
		return nil, err
	}
	nw := workers(cfg.workers)
	body := data[hFileHeader : len(data)-hFileDigest]
	blocks := (len(body) + hFileBlock - 1) / hFileBlock
	sums := make([]byte, blocks*32)
	pr := newProgressReporter(cfg.progress, "h file: digest", int64(len(data)))
	err = parallelRange(ctx, blocks, 1, nw, func(s, e int) error {
		for i := s; i < e; i++ {
			sum := blake2b.Sum256(body[i*hFileBlock : min((i+1)*hFileBlock, len(body))])
			copy(sums[i*32:], sum[:])
			pr.add(int64(min((i+1)*hFileBlock, len(body)) - i*hFileBlock))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	top := hFileTop(data[:hFileHeader], sums)
	if !bytes.Equal(top, data[len(data)-hFileDigest:]) {
		return nil, &FormatError{Section: SectionHeader, Index: -1, Offset: int64(len(data) - hFileDigest),
			Err: fmt.Errorf("%w: recorded %x, content gives %x", ErrFileDigest, data[len(data)-hFileDigest:], top)}
	}
	pr.add(hFileHeader + hFileDigest)
	out := &HFile{HFileHeader: *h, Digest: hex.EncodeToString(top)}
	dr := newProgressReporter(cfg.progress, "h file: decode", int64(h.Domain+h.Aux+h.Inputs))
	off := int64(hFileHeader)
	for _, s := range []struct {
		name string
		n    int
		dst  *[]curve.G1Affine
	}{{SectionH, h.Domain, &out.H}, {SectionL, h.Aux, &out.L}, {SectionLInput, h.Inputs, &out.LInput}} {
		sec := Section{Name: s.name, Count: s.n, Offset: off, PointSize: g1Uncompressed}
		if *s.dst, err = decodeG1Section(ctx, data, sec, false, nw, dr); err != nil {
			return nil, err
		}
		off = sec.End()
	}
	return out, nil
}

// WithHFile returns a key in HCosetLagrange form made of pk's verifying
// key, A, B_G1 and B_G2 (pk monomial, the H file's source) and the H
// file's H, L and LInput, after checking that their lengths agree (pk's
// h of domain − 1, l of aux, ic of inputs; ErrShape naming the section).
// Nothing is copied.
func WithHFile(pk *ProvingKey, hf *HFile) (*ProvingKey, error) {
	if pk == nil || hf == nil {
		return nil, fmt.Errorf("groth16: %w: nil key or h file", ErrShape)
	}
	if pk.HForm != HMonomial {
		return nil, fmt.Errorf("groth16: h file: %w: the source key is in %v form, want monomial", ErrShape, pk.HForm)
	}
	for _, x := range []struct {
		what      string
		got, want int
	}{
		{"h (domain − 1)", len(pk.H), hf.Domain - 1},
		{"l (aux)", len(pk.L), hf.Aux},
		{"ic (inputs)", len(pk.VK.IC), hf.Inputs},
	} {
		// A key decoded without H and L (the caller reads them from the
		// H file only) passes with empty sections.
		if x.got != x.want && x.got != 0 {
			return nil, fmt.Errorf("groth16: h file: %w: the source key's %s has %d points, the h file is for %d", ErrShape, x.what, x.got, x.want)
		}
	}
	if len(pk.VK.IC) != hf.Inputs {
		return nil, fmt.Errorf("groth16: h file: %w: the source key has %d ic points, the h file %d inputs", ErrShape, len(pk.VK.IC), hf.Inputs)
	}
	return &ProvingKey{VK: pk.VK, HForm: HCosetLagrange, H: hf.H, L: hf.L, LInput: hf.LInput, A: pk.A, BG1: pk.BG1, BG2: pk.BG2}, nil
}
