package ceremony

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/crypto/blake2b"

	"github.com/c2cluster/c2cluster/pkg/groth16"
)

// DigestLen is the length of a digest in hex digits.
const DigestLen = 32

// digestBuffer is the read size of Digest.
const digestBuffer = 4 << 20

// Digest reads r to its end and returns the digest Filecoin's parameter
// tools compare with parameters.json: BLAKE2b-512 (unkeyed, 64-byte output)
// of the whole input, the first 16 bytes of it in lowercase hex (32 digits).
// This is rust-fil-proofs' get_digest_for_file_within_cache and
// read_cached_params check (blake2b_simd's to_hex()[..32]) and go-paramfetch's
// checkFile (hex.EncodeToString(sum[:16])).
//
// It streams: memory does not grow with the input. progress, if not nil,
// is called under stage with the bytes read so far and total (pass the
// input's size, or 0 when unknown); ctx is checked between reads.
func Digest(ctx context.Context, r io.Reader, stage string, total int64, progress groth16.Progress) (string, error) {
	h, err := blake2b.New512(nil)
	if err != nil {
		return "", fmt.Errorf("ceremony: digest: %w", err)
	}
	buf := make([]byte, digestBuffer)
	var done int64
	report := func() {
		if progress != nil {
			progress(stage, done, max(total, done))
		}
	}
	report()
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := r.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			done += int64(n)
			report()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("ceremony: digest: read after %d bytes: %w", done, err)
		}
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:DigestLen/2]), nil
}

// FileDigest is the Digest of the file at path, with progress under the
// stage "ceremony: digest <file name>".
func FileDigest(ctx context.Context, path string, progress groth16.Progress) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("ceremony: digest: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("ceremony: digest: %w", err)
	}
	d, err := Digest(ctx, f, "ceremony: digest "+filepath.Base(path), st.Size(), progress)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// DigestError is a file whose digest is not its parameters.json digest.
type DigestError struct {
	Path     string
	Expected string
	Actual   string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("ceremony: %s: digest %s, parameters.json says %s: the file is not the official one (damaged or incomplete download?); delete it and fetch it again",
		e.Path, e.Actual, e.Expected)
}

// Is makes errors.Is(err, ErrDigestMismatch) true.
func (e *DigestError) Is(target error) bool { return target == ErrDigestMismatch }

// ErrDigestMismatch matches every *DigestError.
var ErrDigestMismatch = errors.New("ceremony: digest mismatch")
