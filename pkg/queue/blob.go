package queue

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// BlobInfo describes a stored blob.
type BlobInfo struct {
	Name   string
	Size   uint64
	SHA256 [32]byte
}

// PutBlob stores data under name (a job id) in the blob bucket. Storing
// the same name again replaces it.
func (q *Queue) PutBlob(ctx context.Context, name string, data []byte) (BlobInfo, error) {
	if err := CheckName("blob name", name); err != nil {
		return BlobInfo{}, fmt.Errorf("queue: %w", err)
	}
	if _, err := q.blobs.PutBytes(ctx, name, data); err != nil {
		return BlobInfo{}, fmt.Errorf("queue: put blob %s (%d bytes): %w", name, len(data), err)
	}
	return BlobInfo{Name: name, Size: uint64(len(data)), SHA256: sha256.Sum256(data)}, nil
}

// GetBlob reads a blob. A missing one is ErrBlobNotFound. When want is not
// nil, the content's SHA-256 must equal it.
func (q *Queue) GetBlob(ctx context.Context, name string, want []byte) ([]byte, error) {
	if err := CheckName("blob name", name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBlobNotFound, err)
	}
	data, err := q.blobs.GetBytes(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrBlobNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: get blob %s: %w", name, err)
	}
	if want != nil {
		got := sha256.Sum256(data)
		if string(got[:]) != string(want) {
			return nil, fmt.Errorf("queue: blob %s: SHA-256 %x does not match the task's %x", name, got, want)
		}
	}
	return data, nil
}

// DeleteBlob removes a blob; a missing one is not an error.
func (q *Queue) DeleteBlob(ctx context.Context, name string) error {
	err := q.blobs.Delete(ctx, name)
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("queue: delete blob %s: %w", name, err)
	}
	return nil
}
