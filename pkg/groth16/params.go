package groth16

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// vkFixedSize is the size of the six fixed verifying-key points
// (alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2), uncompressed.
const vkFixedSize = 3*g1Uncompressed + 3*g2Uncompressed

// Section locates one point section of a .params (or .vk) file.
type Section struct {
	// Name is one of the Section* constants.
	Name string
	// Count is the number of points, as announced by the section's u32
	// big-endian count.
	Count int
	// Offset is the byte offset of the first point (just after the count).
	Offset int64
	// PointSize is 96 (G1) or 192 (G2).
	PointSize int
}

// End is the offset just past the section's last point.
func (s Section) End() int64 { return s.Offset + int64(s.Count)*int64(s.PointSize) }

// ParamsLayout is the parsed header structure of a .params file: where each
// section lies. It is computed from the counts alone, without decoding any
// point, and is consistent with the file size.
type ParamsLayout struct {
	IC, H, L, A, BG1, BG2 Section
	// Size is the total file size.
	Size int64
}

// Sections returns the point sections in file order.
func (l *ParamsLayout) Sections() []Section {
	return []Section{l.IC, l.H, l.L, l.A, l.BG1, l.BG2}
}

// ParseParamsLayout reads the section counts of a .params file held in data
// and checks that every announced section fits in data and that nothing
// follows the last one. It decodes no point.
func ParseParamsLayout(data []byte) (*ParamsLayout, error) {
	size := int64(len(data))
	if size < vkFixedSize {
		return nil, &FormatError{Section: SectionVK, Index: -1, Offset: 0,
			Err: fmt.Errorf("%w: %d bytes, the fixed verifying key needs %d", ErrTruncated, size, vkFixedSize)}
	}
	l := &ParamsLayout{Size: size}
	off := int64(vkFixedSize)
	next := func(name string, pointSize int) (Section, error) {
		if size-off < 4 {
			return Section{}, &FormatError{Section: name, Index: -1, Offset: off,
				Err: fmt.Errorf("%w: file ends before the section count", ErrTruncated)}
		}
		n := binary.BigEndian.Uint32(data[off:])
		s := Section{Name: name, Count: int(n), Offset: off + 4, PointSize: pointSize}
		if need := int64(n) * int64(pointSize); need > size-s.Offset {
			return Section{}, &FormatError{Section: name, Index: -1, Offset: off,
				Err: fmt.Errorf("%w: count %d needs %d bytes, %d left in the file", ErrTruncated, n, need, size-s.Offset)}
		}
		off = s.End()
		return s, nil
	}
	var err error
	if l.IC, err = next(SectionIC, g1Uncompressed); err != nil {
		return nil, err
	}
	if l.H, err = next(SectionH, g1Uncompressed); err != nil {
		return nil, err
	}
	if l.L, err = next(SectionL, g1Uncompressed); err != nil {
		return nil, err
	}
	if l.A, err = next(SectionA, g1Uncompressed); err != nil {
		return nil, err
	}
	if l.BG1, err = next(SectionBG1, g1Uncompressed); err != nil {
		return nil, err
	}
	if l.BG2, err = next(SectionBG2, g2Uncompressed); err != nil {
		return nil, err
	}
	if off != size {
		return nil, &FormatError{Section: SectionBG2, Index: -1, Offset: off,
			Err: fmt.Errorf("%w: %d bytes after the last section", ErrTrailingData, size-off)}
	}
	if l.IC.Count == 0 {
		return nil, &FormatError{Section: SectionIC, Index: -1, Offset: l.IC.Offset - 4,
			Err: fmt.Errorf("%w: ic is empty (it needs at least the point of the constant one)", ErrShape)}
	}
	if l.BG1.Count != l.BG2.Count {
		return nil, &FormatError{Section: SectionBG2, Index: -1, Offset: l.BG2.Offset - 4,
			Err: fmt.Errorf("%w: b_g2 has %d points but b_g1 has %d", ErrShape, l.BG2.Count, l.BG1.Count)}
	}
	return l, nil
}

// ParamsOption configures reading of parameters.
type ParamsOption func(*paramsConfig)

type paramsConfig struct {
	subgroup bool
	checker  SubgroupChecker // the sections' subgroup check after decoding (nil: per point while decoding)
	workers  int
	progress Progress
}

func newParamsConfig(opts []ParamsOption) paramsConfig {
	c := paramsConfig{subgroup: true}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// SkipSubgroupCheck skips the subgroup membership check of the proving-key
// sections (h, l, a, b_g1, b_g2), the bulk of the loading time. Use it only
// for files whose digest is trusted (e.g. checked against Filecoin's
// parameters.json). Coordinates are still checked to be canonical and on the
// curve; the verifying key is always fully checked.
func SkipSubgroupCheck() ParamsOption { return func(c *paramsConfig) { c.subgroup = false } }

// ParamsWorkers sets the number of decoding goroutines (default GOMAXPROCS).
func ParamsWorkers(n int) ParamsOption { return func(c *paramsConfig) { c.workers = n } }

// ParamsProgress reports decoding progress in points, stage "params: decode".
func ParamsProgress(p Progress) ParamsOption { return func(c *paramsConfig) { c.progress = p } }

// decodeChunk is the unit of parallel decoding, in G1 points (half as many
// G2 points: the same bytes).
const decodeChunk = 1 << 12

// decodeVK decodes the verifying key (fixed points and ic) from data, which
// starts at the beginning of a .params or .vk file.
func decodeVK(data []byte, ic Section, nw int) (*VerifyingKey, error) {
	vk := &VerifyingKey{}
	off := 0
	fixed := []struct {
		g1   *curve.G1Affine
		g2   *curve.G2Affine
		name string
	}{
		{g1: &vk.AlphaG1, name: "alpha_g1"},
		{g1: &vk.BetaG1, name: "beta_g1"},
		{g2: &vk.BetaG2, name: "beta_g2"},
		{g2: &vk.GammaG2, name: "gamma_g2"},
		{g1: &vk.DeltaG1, name: "delta_g1"},
		{g2: &vk.DeltaG2, name: "delta_g2"},
	}
	for i, f := range fixed {
		var err error
		if f.g1 != nil {
			err = decodeG1Uncompressed(f.g1, data[off:off+g1Uncompressed], true)
			off += g1Uncompressed
		} else {
			err = decodeG2Uncompressed(f.g2, data[off:off+g2Uncompressed], true)
			off += g2Uncompressed
		}
		if err != nil {
			size := g1Uncompressed
			if f.g2 != nil {
				size = g2Uncompressed
			}
			return nil, &FormatError{Section: SectionVK, Index: i, Offset: int64(off - size), Err: fmt.Errorf("%s: %w", f.name, err)}
		}
	}
	ic2, err := decodeG1Section(context.Background(), data, ic, true, nw, nil)
	if err != nil {
		return nil, err
	}
	vk.IC = ic2
	return vk, nil
}

func decodeG1Section(ctx context.Context, data []byte, s Section, subgroup bool, nw int, pr *progressReporter) ([]curve.G1Affine, error) {
	return decodeSection(ctx, data, s, decodeG1Uncompressed, subgroup, nw, pr)
}

func decodeG2Section(ctx context.Context, data []byte, s Section, subgroup bool, nw int, pr *progressReporter) ([]curve.G2Affine, error) {
	return decodeSection(ctx, data, s, decodeG2Uncompressed, subgroup, nw, pr)
}

// decodeSection decodes the s.Count points of s with decode, in parallel
// chunks of decodeChunk·96 bytes, into an array with room for one point
// more (the H query, domain − 1 points, extends to the domain in place:
// ConvertHCosetLagrangeInPlace).
func decodeSection[P any](ctx context.Context, data []byte, s Section, decode func(*P, []byte, bool) error,
	subgroup bool, nw int, pr *progressReporter) ([]P, error) {
	out := make([]P, s.Count, s.Count+1)
	size := int64(s.PointSize)
	err := parallelRange(ctx, s.Count, decodeChunk*g1Uncompressed/s.PointSize, nw, func(start, end int) error {
		for i := start; i < end; i++ {
			off := s.Offset + int64(i)*size
			if err := decode(&out[i], data[off:off+size], subgroup); err != nil {
				return &FormatError{Section: s.Name, Index: i, Offset: off, Err: err}
			}
		}
		pr.add(int64(end - start))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeParams decodes every section of data (laid out as l) into a
// ProvingKey. Sections are decoded one after the other, each by all workers;
// the verifying key is always subgroup-checked.
func decodeParams(ctx context.Context, data []byte, l *ParamsLayout, cfg paramsConfig, skip ...string) (*ProvingKey, error) {
	nw := workers(cfg.workers)
	vk, err := decodeVK(data, l.IC, nw)
	if err != nil {
		return nil, err
	}
	pk := &ProvingKey{VK: *vk}
	var g1 []struct {
		sec Section
		dst *[]curve.G1Affine
	}
	total := int64(l.BG2.Count)
	for _, s := range []struct {
		sec Section
		dst *[]curve.G1Affine
	}{{l.H, &pk.H}, {l.L, &pk.L}, {l.A, &pk.A}, {l.BG1, &pk.BG1}} {
		if !slices.Contains(skip, s.sec.Name) {
			g1 = append(g1, s)
			total += int64(s.sec.Count)
		}
	}
	pr := newProgressReporter(cfg.progress, "params: decode", total)
	for _, s := range g1 {
		if *s.dst, err = decodeG1Section(ctx, data, s.sec, cfg.decoderSubgroup(), nw, pr); err != nil {
			return nil, err
		}
	}
	if pk.BG2, err = decodeG2Section(ctx, data, l.BG2, cfg.decoderSubgroup(), nw, pr); err != nil {
		return nil, err
	}
	if cfg.externalSubgroup() {
		pr := newProgressReporter(cfg.progress, "params: subgroup check", total)
		for _, s := range g1 {
			if err := cfg.checkG1(ctx, *s.dst, s.sec, pr); err != nil {
				return nil, err
			}
		}
		if err := cfg.checkG2(ctx, pk.BG2, l.BG2, pr); err != nil {
			return nil, err
		}
	}
	return pk, nil
}

// DecodeParams decodes a whole .params image held in memory. See ReadParams.
func DecodeParams(data []byte, opts ...ParamsOption) (*ProvingKey, error) {
	l, err := ParseParamsLayout(data)
	if err != nil {
		return nil, err
	}
	return decodeParams(context.Background(), data, l, newParamsConfig(opts))
}

var errParamsClosed = errors.New("groth16: params file is closed")

// ParamsFile is an open, memory-mapped .params file whose layout has been
// validated. Sections are decoded on demand, so a caller that needs only the
// verifying key reads only the first pages of the file. Methods are safe for
// concurrent use until Close.
type ParamsFile struct {
	path   string
	data   []byte
	unmap  func() error
	layout *ParamsLayout
	cfg    paramsConfig
}

// OpenParams maps the .params file at path and validates its layout (every
// count against the file size). It decodes no point yet.
func OpenParams(path string, opts ...ParamsOption) (*ParamsFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("groth16: open params: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("groth16: open params: %w", err)
	}
	if st.Size() < vkFixedSize {
		return nil, fmt.Errorf("groth16: params %s: %w", path, &FormatError{Section: SectionVK, Index: -1,
			Err: fmt.Errorf("%w: %d bytes, the fixed verifying key needs %d", ErrTruncated, st.Size(), vkFixedSize)})
	}
	if st.Size() > math.MaxInt {
		return nil, fmt.Errorf("groth16: params %s: file too large to map", path)
	}
	data, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("groth16: map params %s: %w", path, err)
	}
	l, err := ParseParamsLayout(data)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("groth16: params %s: %w", path, err)
	}
	return &ParamsFile{path: path, data: data, unmap: unmap, layout: l, cfg: newParamsConfig(opts)}, nil
}

// Layout returns the file's section layout.
func (f *ParamsFile) Layout() ParamsLayout { return *f.layout }

// VerifyingKey decodes the verifying key (always fully checked).
func (f *ParamsFile) VerifyingKey() (*VerifyingKey, error) {
	if f.data == nil {
		return nil, errParamsClosed
	}
	vk, err := decodeVK(f.data, f.layout.IC, workers(f.cfg.workers))
	if err != nil {
		return nil, fmt.Errorf("groth16: params %s: %w", f.path, err)
	}
	return vk, nil
}

// G1Section decodes one G1 section by name (SectionH, SectionL, SectionA,
// SectionBG1 or SectionIC).
func (f *ParamsFile) G1Section(ctx context.Context, name string) ([]curve.G1Affine, error) {
	if f.data == nil {
		return nil, errParamsClosed
	}
	var s Section
	switch name {
	case SectionIC:
		s = f.layout.IC
	case SectionH:
		s = f.layout.H
	case SectionL:
		s = f.layout.L
	case SectionA:
		s = f.layout.A
	case SectionBG1:
		s = f.layout.BG1
	default:
		return nil, fmt.Errorf("groth16: params: %q is not a G1 section", name)
	}
	if name == SectionIC {
		pts, err := decodeG1Section(ctx, f.data, s, true, workers(f.cfg.workers), nil)
		if err != nil {
			return nil, fmt.Errorf("groth16: params %s: %w", f.path, err)
		}
		return pts, nil
	}
	pts, err := decodeG1Section(ctx, f.data, s, f.cfg.decoderSubgroup(), workers(f.cfg.workers), nil)
	if err == nil {
		err = f.cfg.checkG1(ctx, pts, s, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("groth16: params %s: %w", f.path, err)
	}
	return pts, nil
}

// BG2 decodes the b_g2 section.
func (f *ParamsFile) BG2(ctx context.Context) ([]curve.G2Affine, error) {
	if f.data == nil {
		return nil, errParamsClosed
	}
	pts, err := decodeG2Section(ctx, f.data, f.layout.BG2, f.cfg.decoderSubgroup(), workers(f.cfg.workers), nil)
	if err == nil {
		err = f.cfg.checkG2(ctx, pts, f.layout.BG2, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("groth16: params %s: %w", f.path, err)
	}
	return pts, nil
}

// ProvingKey decodes every section, in parallel.
func (f *ParamsFile) ProvingKey(ctx context.Context) (*ProvingKey, error) {
	if f.data == nil {
		return nil, errParamsClosed
	}
	pk, err := decodeParams(ctx, f.data, f.layout, f.cfg)
	if err != nil {
		return nil, fmt.Errorf("groth16: params %s: %w", f.path, err)
	}
	return pk, nil
}

// ProvingKeyWithout decodes every section but the named G1 ones (SectionH,
// SectionL), which it leaves empty: for a key whose H and L come from
// elsewhere (WithHFile).
func (f *ParamsFile) ProvingKeyWithout(ctx context.Context, sections ...string) (*ProvingKey, error) {
	if f.data == nil {
		return nil, errParamsClosed
	}
	for _, s := range sections {
		if s != SectionH && s != SectionL {
			return nil, fmt.Errorf("groth16: params %s: ProvingKeyWithout(%q): only h and l can be left out", f.path, s)
		}
	}
	pk, err := decodeParams(ctx, f.data, f.layout, f.cfg, sections...)
	if err != nil {
		return nil, fmt.Errorf("groth16: params %s: %w", f.path, err)
	}
	return pk, nil
}

// checkBlock is the number of points CheckPoints decodes at a time for an
// external subgroup checker (SubgroupCheckWith): 96 MiB of G1 points.
const checkBlock = 1 << 20

// CheckPoints decodes every point of the file (the verifying key, ic, h, l,
// a, b_g1, b_g2) with the checks ProvingKey makes (canonical coordinates,
// the curve equation and, unless SkipSubgroupCheck, subgroup membership, on
// the CPU or through SubgroupCheckWith), keeping none: its memory does not
// grow with the file, so it checks a 32 GiB sector's ~47 GB of parameters
// on any host. Progress (ParamsProgress) is reported in points under the
// stage "params: check". Errors are those of ProvingKey.
func (f *ParamsFile) CheckPoints(ctx context.Context) error {
	if f.data == nil {
		return errParamsClosed
	}
	if _, err := f.VerifyingKey(); err != nil {
		return err
	}
	l := f.layout
	nw := workers(f.cfg.workers)
	pr := newProgressReporter(f.cfg.progress, "params: check", int64(l.H.Count+l.L.Count+l.A.Count+l.BG1.Count+l.BG2.Count))
	var firstG1 func([]curve.G1Affine) (int, error)
	var firstG2 func([]curve.G2Affine) (int, error)
	if f.cfg.externalSubgroup() {
		firstG1, firstG2 = f.cfg.checker.FirstNotInSubgroupG1, f.cfg.checker.FirstNotInSubgroupG2
	}
	for _, s := range []Section{l.H, l.L, l.A, l.BG1} {
		if err := checkSectionPoints(ctx, f.data, s, decodeG1Uncompressed, f.cfg.decoderSubgroup(), firstG1, nw, pr); err != nil {
			return fmt.Errorf("groth16: params %s: %w", f.path, err)
		}
	}
	if err := checkSectionPoints(ctx, f.data, l.BG2, decodeG2Uncompressed, f.cfg.decoderSubgroup(), firstG2, nw, pr); err != nil {
		return fmt.Errorf("groth16: params %s: %w", f.path, err)
	}
	return nil
}

// checkSectionPoints decodes the points of s with decode and drops them.
// With first (an external subgroup checker) the points are decoded in
// blocks of checkBlock into one buffer and handed to it; otherwise each
// worker decodes into a single point, checking the subgroup itself when
// subgroup is set.
func checkSectionPoints[P any](ctx context.Context, data []byte, s Section, decode func(*P, []byte, bool) error,
	subgroup bool, first func([]P) (int, error), nw int, pr *progressReporter) error {
	size := int64(s.PointSize)
	chunk := decodeChunk * g1Uncompressed / s.PointSize
	decodeRange := func(dst func(i int) *P, base, start, end int) error {
		for i := start; i < end; i++ {
			off := s.Offset + int64(base+i)*size
			if err := decode(dst(i), data[off:off+size], subgroup); err != nil {
				return &FormatError{Section: s.Name, Index: base + i, Offset: off, Err: err}
			}
		}
		return nil
	}
	if first == nil {
		return parallelRange(ctx, s.Count, chunk, nw, func(start, end int) error {
			var p P
			if err := decodeRange(func(int) *P { return &p }, 0, start, end); err != nil {
				return err
			}
			pr.add(int64(end - start))
			return nil
		})
	}
	buf := make([]P, min(checkBlock, s.Count))
	for base := 0; base < s.Count; base += checkBlock {
		pts := buf[:min(checkBlock, s.Count-base)]
		err := parallelRange(ctx, len(pts), chunk, nw, func(start, end int) error {
			return decodeRange(func(i int) *P { return &pts[i] }, base, start, end)
		})
		if err != nil {
			return err
		}
		i, err := first(pts)
		if err != nil {
			return fmt.Errorf("groth16: section %s: subgroup check: %w", s.Name, err)
		}
		if i >= 0 {
			idx := base + i
			return &FormatError{Section: s.Name, Index: idx, Offset: s.Offset + int64(idx)*size, Err: ErrNotInSubgroup}
		}
		pr.add(int64(len(pts)))
	}
	return nil
}

// Close unmaps the file. Slices returned earlier stay valid (they are
// decoded copies).
func (f *ParamsFile) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap, f.data = nil, nil
	return err
}

// ReadParams reads a bellperson/Filecoin .params file: it maps the file,
// validates the section counts against the file size, and decodes all
// sections in parallel, checking every point for canonical encoding, curve
// membership and (unless SkipSubgroupCheck) subgroup membership. Errors name
// the section (vk, ic, h, l, a, b_g1, b_g2), the point and the problem.
func ReadParams(path string, opts ...ParamsOption) (*ProvingKey, error) {
	f, err := OpenParams(path, opts...)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ProvingKey(context.Background())
}

// encodeChunk is the number of G1 points encoded per write batch (half as
// many G2 points: the same bytes).
const encodeChunk = 1 << 14

func writeU32(w io.Writer, n int, section string) error {
	if n < 0 || int64(n) > math.MaxUint32 {
		return fmt.Errorf("groth16: section %s: %d points do not fit a u32 count", section, n)
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(n))
	_, err := w.Write(b[:])
	return err
}

func writeG1s(w io.Writer, pts []curve.G1Affine, section string, buf []byte) error {
	return writePoints(w, pts, g1Uncompressed, func(p *curve.G1Affine, out []byte) {
		b := p.RawBytes()
		copy(out, b[:])
	}, section, buf)
}

func writeG2s(w io.Writer, pts []curve.G2Affine, section string, buf []byte) error {
	return writePoints(w, pts, g2Uncompressed, func(p *curve.G2Affine, out []byte) {
		b := p.RawBytes()
		copy(out, b[:])
	}, section, buf)
}

// writePoints writes a section: the u32 count, then every point encoded
// (size bytes each) by encode, in parallel batches of encodeChunk·96 bytes
// staged in buf.
func writePoints[P any](w io.Writer, pts []P, size int, encode func(*P, []byte), section string, buf []byte) error {
	if err := writeU32(w, len(pts), section); err != nil {
		return err
	}
	return encodePoints(w, pts, size, encode, section, buf)
}

// encodePoints writes pts encoded (size bytes each) by encode, without a
// count, in parallel batches of encodeChunk·96 bytes staged in buf.
func encodePoints[P any](w io.Writer, pts []P, size int, encode func(*P, []byte), section string, buf []byte) error {
	batch := encodeChunk * g1Uncompressed / size
	for start := 0; start < len(pts); start += batch {
		end := min(start+batch, len(pts))
		out := buf[:(end-start)*size]
		_ = parallelRange(context.Background(), end-start, batch/16, workers(0), func(s, e int) error {
			for i := s; i < e; i++ {
				encode(&pts[start+i], out[i*size:])
			}
			return nil
		})
		if _, err := w.Write(out); err != nil {
			return fmt.Errorf("groth16: write section %s: %w", section, err)
		}
	}
	return nil
}

func writeVK(w io.Writer, vk *VerifyingKey, buf []byte) error {
	for _, p := range []*curve.G1Affine{&vk.AlphaG1, &vk.BetaG1} {
		b := p.RawBytes()
		if _, err := w.Write(b[:]); err != nil {
			return fmt.Errorf("groth16: write vk: %w", err)
		}
	}
	for _, p := range []*curve.G2Affine{&vk.BetaG2, &vk.GammaG2} {
		b := p.RawBytes()
		if _, err := w.Write(b[:]); err != nil {
			return fmt.Errorf("groth16: write vk: %w", err)
		}
	}
	b1 := vk.DeltaG1.RawBytes()
	if _, err := w.Write(b1[:]); err != nil {
		return fmt.Errorf("groth16: write vk: %w", err)
	}
	b2 := vk.DeltaG2.RawBytes()
	if _, err := w.Write(b2[:]); err != nil {
		return fmt.Errorf("groth16: write vk: %w", err)
	}
	return writeG1s(w, vk.IC, SectionIC, buf)
}

// WriteVerifyingKey writes vk in bellperson's .vk layout: alpha_g1, beta_g1,
// beta_g2, gamma_g2, delta_g1, delta_g2, then ic as a u32 big-endian count
// and points; all points uncompressed.
func WriteVerifyingKey(w io.Writer, vk *VerifyingKey) error {
	if vk == nil {
		return fmt.Errorf("groth16: write vk: %w: nil verifying key", ErrShape)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := writeVK(bw, vk, make([]byte, encodeChunk*g1Uncompressed)); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteParams writes pk in bellperson's .params layout: the verifying key
// (as WriteVerifyingKey), then h, l, a, b_g1, b_g2, each a u32 big-endian
// count followed by uncompressed points. A key in HCosetLagrange form is
// refused (ErrShape).
func WriteParams(w io.Writer, pk *ProvingKey) error {
	if pk == nil {
		return fmt.Errorf("groth16: write params: %w: nil proving key", ErrShape)
	}
	if pk.HForm != HMonomial {
		return fmt.Errorf("groth16: write params: %w: the H query is in %v form, which bellperson's layout cannot hold (only a monomial key can be written)", ErrShape, pk.HForm)
	}
	if len(pk.BG1) != len(pk.BG2) {
		return fmt.Errorf("groth16: write params: %w: b_g1 has %d points, b_g2 %d", ErrShape, len(pk.BG1), len(pk.BG2))
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	buf := make([]byte, encodeChunk*g1Uncompressed)
	if err := writeVK(bw, &pk.VK, buf); err != nil {
		return err
	}
	for _, s := range []struct {
		name string
		pts  []curve.G1Affine
	}{{SectionH, pk.H}, {SectionL, pk.L}, {SectionA, pk.A}, {SectionBG1, pk.BG1}} {
		if err := writeG1s(bw, s.pts, s.name, buf); err != nil {
			return err
		}
	}
	if err := writeG2s(bw, pk.BG2, SectionBG2, buf); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("groth16: write params: %w", err)
	}
	return nil
}

// vkReadBatch is how many ic points ReadVerifyingKey reads at a time, so a
// corrupt count cannot make it allocate gigabytes up front.
const vkReadBatch = 1 << 12

// ReadVerifyingKey reads a verifying key in bellperson's .vk layout (see
// WriteVerifyingKey), checking every point fully. It reads exactly the key's
// bytes from r.
func ReadVerifyingKey(r io.Reader) (*VerifyingKey, error) {
	head := make([]byte, vkFixedSize+4)
	if n, err := io.ReadFull(r, head); err != nil {
		return nil, &FormatError{Section: SectionVK, Index: -1, Offset: int64(n), Err: fmt.Errorf("%w: %v", ErrTruncated, err)}
	}
	count := int(binary.BigEndian.Uint32(head[vkFixedSize:]))
	// Read ic in batches so that a huge announced count fails on the short
	// read instead of allocating.
	data := head
	for read := 0; read < count; {
		n := min(vkReadBatch, count-read)
		chunk := make([]byte, n*g1Uncompressed)
		if got, err := io.ReadFull(r, chunk); err != nil {
			return nil, &FormatError{Section: SectionIC, Index: read + got/g1Uncompressed,
				Offset: int64(len(data) + got), Err: fmt.Errorf("%w: count %d: %v", ErrTruncated, count, err)}
		}
		data = append(data, chunk...)
		read += n
	}
	if count == 0 {
		return nil, &FormatError{Section: SectionIC, Index: -1, Offset: vkFixedSize,
			Err: fmt.Errorf("%w: ic is empty", ErrShape)}
	}
	ic := Section{Name: SectionIC, Count: count, Offset: vkFixedSize + 4, PointSize: g1Uncompressed}
	return decodeVK(data, ic, 0)
}

// WriteParamsFile writes pk to path in the .params layout, through a
// temporary file in the same directory renamed into place, so a reader never
// sees a partial file.
func WriteParamsFile(path string, pk *ProvingKey) error {
	return writeFileAtomic(path, func(w io.Writer) error { return WriteParams(w, pk) })
}

// WriteVerifyingKeyFile writes vk to path in the .vk layout, atomically.
func WriteVerifyingKeyFile(path string, vk *VerifyingKey) error {
	return writeFileAtomic(path, func(w io.Writer) error { return WriteVerifyingKey(w, vk) })
}

// ReadVerifyingKeyFile reads a .vk file; unlike ReadVerifyingKey it also
// rejects bytes after the key (ErrTrailingData).
func ReadVerifyingKeyFile(path string) (*VerifyingKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("groth16: read vk: %w", err)
	}
	r := bytes.NewReader(b)
	vk, err := ReadVerifyingKey(r)
	if err != nil {
		return nil, fmt.Errorf("groth16: vk %s: %w", path, err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("groth16: vk %s: %w", path, &FormatError{Section: SectionIC, Index: -1,
			Offset: int64(len(b) - r.Len()), Err: fmt.Errorf("%w: %d bytes after the key", ErrTrailingData, r.Len())})
	}
	return vk, nil
}

func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("groth16: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("groth16: write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("groth16: write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("groth16: write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("groth16: write %s: %w", path, err)
	}
	return nil
}
