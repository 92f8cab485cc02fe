// Package jsonscan checks a JSON document in one pass without decoding it:
// the grammar of RFC 8259, a nesting limit, and no object with two members
// of the same name. Decoders that keep the last of duplicate names
// (encoding/json, protojson for unknown fields) would otherwise let a
// document say two things at once. A visitor sees every string member value
// with its path, for checks that need a value before the full decode (the
// C1 output's registered_proof, the API's enum names).
//
// Scan allocates nothing per value on ordinary input: names are compared in
// place, and only names with escapes are unescaped.
package jsonscan

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepthDefault is the nesting limit when Options.MaxDepth is 0.
const MaxDepthDefault = 64

// Step is one step of a path: an object member's name (unescaped) or, when
// Name is nil, an array index.
type Step struct {
	Name  []byte
	Index int
}

// Options tune Scan.
type Options struct {
	// FoldNames compares member names as encoding/json matches them to
	// struct fields: case-insensitively (bytes.EqualFold). Otherwise names
	// must differ byte for byte.
	FoldNames bool
	// MaxDepth bounds the nesting of arrays and objects; 0 means
	// MaxDepthDefault.
	MaxDepth int
	// String, when set, is called with every string that is an object
	// member's value or an array element: its path (valid only during the
	// call) and its raw contents between the quotes (escapes left as they
	// are; Unquote decodes them). An error it returns ends the scan.
	String func(path []Step, raw []byte) error
}

// Error is a document Scan rejects: what and where.
type Error struct {
	// Path is the member names and indexes leading to the problem, as
	// a.b[3].c ("" at the top).
	Path string
	// Offset is the byte offset of the problem.
	Offset int
	Reason string
	// Err is the error of a String visitor, if that ended the scan.
	Err error
}

func (e *Error) Error() string {
	s := ""
	if e.Path != "" {
		s = e.Path + ": "
	}
	return s + e.Reason + " (at byte " + strconv.Itoa(e.Offset) + ")"
}

func (e *Error) Unwrap() error { return e.Err }

// FormatPath writes a path as a.b[3].c.
func FormatPath(path []Step) string {
	var b strings.Builder
	for _, s := range path {
		if s.Name == nil {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(s.Name)
	}
	return b.String()
}

// Scan checks that data is exactly one JSON value (surrounding whitespace
// allowed) within the nesting limit, with no object holding two members of
// the same name.
func Scan(data []byte, opts Options) error {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = MaxDepthDefault
	}
	s := &scanner{data: data, opts: opts}
	s.skipSpace()
	if s.i >= len(s.data) {
		return s.fail("empty document")
	}
	if err := s.value(); err != nil {
		return err
	}
	s.skipSpace()
	if s.i < len(s.data) {
		return s.fail("data after the document")
	}
	return nil
}

type scanner struct {
	data []byte
	i    int
	opts Options
	path []Step
	// names holds the member names of every open object, innermost last.
	names [][]byte
}

func (s *scanner) fail(format string, a ...any) error {
	return &Error{Path: FormatPath(s.path), Offset: s.i, Reason: fmt.Sprintf(format, a...)}
}

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value() error {
	if s.i >= len(s.data) {
		return s.fail("truncated document")
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		start := s.i
		raw, _, err := s.str()
		if err != nil {
			return err
		}
		if s.opts.String != nil && len(s.path) > 0 {
			if err := s.opts.String(s.path, raw); err != nil {
				return &Error{Path: FormatPath(s.path), Offset: start, Reason: err.Error(), Err: err}
			}
		}
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.fail("unexpected character %q", c)
	}
}

func (s *scanner) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.i:], []byte(lit)) {
		return s.fail("invalid literal (want %s)", lit)
	}
	s.i += len(lit)
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *scanner) number() error {
	if s.data[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.data) && s.data[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return s.fail("invalid number")
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.fail("invalid number: no digit after the decimal point")
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.fail("invalid number: no digit in the exponent")
		}
	}
	return nil
}

// str reads a string at s.i (the opening quote) and returns its raw
// contents and whether it has escapes.
func (s *scanner) str() ([]byte, bool, error) {
	start := s.i + 1
	escaped := false
	for j := start; j < len(s.data); j++ {
		switch c := s.data[j]; {
		case c == '"':
			s.i = j + 1
			return s.data[start:j], escaped, nil
		case c == '\\':
			escaped = true
			j++
			if j >= len(s.data) {
				s.i = j
				return nil, false, s.fail("truncated string")
			}
			switch s.data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.data) || !isHex4(s.data[j+1:j+5]) {
					s.i = j
					return nil, false, s.fail("invalid \\u escape in string")
				}
				j += 4
			default:
				s.i = j
				return nil, false, s.fail("invalid escape \\%c in string", s.data[j])
			}
		case c < 0x20:
			s.i = j
			return nil, false, s.fail("control character %#02x in string", c)
		}
	}
	s.i = len(s.data)
	return nil, false, s.fail("truncated string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Unquote decodes the escapes of a string's raw contents (as Scan checked
// them) the way encoding/json does: invalid surrogates become U+FFFD.
func Unquote(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2 = hex4(raw[i+3:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					r = dec
					i += 6
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, r)
		default: // " \ /
			out = append(out, raw[i])
		}
	}
	return out
}

func hex4(b []byte) rune {
	if len(b) < 4 {
		return unicode.ReplacementChar
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return unicode.ReplacementChar
	}
	return rune(n)
}

func (s *scanner) enter() error {
	if len(s.path) >= s.opts.MaxDepth {
		return s.fail("nested deeper than %d levels", s.opts.MaxDepth)
	}
	return nil
}

func (s *scanner) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // [
	s.path = append(s.path, Step{})
	defer func() { s.path = s.path[:len(s.path)-1] }()
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		s.path[len(s.path)-1].Index = n
		s.skipSpace()
		if err := s.value(); err != nil {
			return err
		}
		s.skipSpace()
		if s.i >= len(s.data) {
			return s.fail("truncated array")
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail("want , or ] after an array element, not %q", s.data[s.i])
		}
	}
}

// foldSmall is how many names an object may have before duplicates are
// looked up in a map rather than by comparing each pair.
const foldSmall = 16

func (s *scanner) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // {
	base := len(s.names)
	depth := len(s.path)
	s.path = append(s.path, Step{Name: []byte{}})
	defer func() {
		s.path = s.path[:depth]
		s.names = s.names[:base]
	}()
	var seen map[string]struct{}
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return s.fail("want a member name in quotes")
		}
		at := s.i
		raw, escaped, err := s.str()
		if err != nil {
			return err
		}
		name := raw
		if escaped {
			name = Unquote(raw)
		}
		// Duplicate check.
		own := s.names[base:]
		if len(own) < foldSmall {
			for _, prev := range own {
				if s.same(prev, name) {
					s.path[depth].Name = name
					s.i = at
					return s.fail("duplicate member name %q%s", name, s.foldNote(prev, name))
				}
			}
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*len(own))
				for _, prev := range own {
					seen[s.key(prev)] = struct{}{}
				}
			}
			k := s.key(name)
			if _, dup := seen[k]; dup {
				s.path[depth].Name = name
				s.i = at
				return s.fail("duplicate member name %q", name)
			}
			seen[k] = struct{}{}
		}
		s.names = append(s.names, name)
		s.path[depth].Name = name

		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return s.fail("want : after a member name")
		}
		s.i++
		s.skipSpace()
		if err := s.value(); err != nil {
			return err
		}
		s.skipSpace()
		if s.i >= len(s.data) {
			return s.fail("truncated object")
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("want , or } after an object member, not %q", s.data[s.i])
		}
	}
}

func (s *scanner) same(a, b []byte) bool {
	if s.opts.FoldNames {
		return bytes.EqualFold(a, b)
	}
	return bytes.Equal(a, b)
}

func (s *scanner) foldNote(prev, name []byte) string {
	if bytes.Equal(prev, name) {
		return ""
	}
	return fmt.Sprintf(" (same as %q: names are compared case-insensitively)", prev)
}

// key is a name's map key: with FoldNames, every rune replaced by the
// smallest rune of its case-folding orbit, so that two names have one key
// exactly when bytes.EqualFold holds.
func (s *scanner) key(name []byte) string {
	if !s.opts.FoldNames {
		return string(name)
	}
	var b strings.Builder
	for _, r := range string(name) {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}
