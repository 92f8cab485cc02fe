package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/c2cluster/c2cluster/pkg/porep/c1"
	"github.com/c2cluster/c2cluster/pkg/queue"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// inputCache keeps the parsed C1 outputs of the last few jobs, so the
// partitions of one job on this worker download and parse it once
// (concurrent loads of the same blob share one download). Parsed outputs
// are read-only after parsing and shared between slots.
type inputCache struct {
	size  int
	group singleflight.Group

	mu    sync.Mutex
	order []string // oldest first
	m     map[string]*c1.Output
}

func newInputCache(size int) *inputCache {
	return &inputCache{size: size, m: map[string]*c1.Output{}}
}

// get returns the parsed C1 output of a task's blob. A blob that is gone,
// does not match the task's SHA-256, or does not parse is bad input
// (queue.Permanent); other failures are transient.
func (c *inputCache) get(ctx context.Context, q *queue.Queue, t *c2clusterv1.PartitionTask) (*c1.Output, error) {
	key := t.BlobRef + "/" + hex.EncodeToString(t.BlobSha256)
	c.mu.Lock()
	if out, ok := c.m[key]; ok {
		c.mu.Unlock()
		return out, nil
	}
	c.mu.Unlock()
	v, err, _ := c.group.Do(key, func() (any, error) {
		data, err := q.GetBlob(ctx, t.BlobRef, nil)
		switch {
		case errors.Is(err, queue.ErrBlobNotFound):
			return nil, queue.Permanent(fmt.Errorf("C1 blob %s is gone: %w", t.BlobRef, err))
		case err != nil:
			return nil, err
		}
		if len(t.BlobSha256) != 0 {
			if sum := sha256.Sum256(data); !bytes.Equal(sum[:], t.BlobSha256) {
				return nil, queue.Permanent(fmt.Errorf("C1 blob %s: SHA-256 %x does not match the task's %x", t.BlobRef, sum, t.BlobSha256))
			}
		}
		out, err := c1.ParseBytes(data)
		if err != nil {
			return nil, queue.Permanent(fmt.Errorf("C1 blob %s: %w", t.BlobRef, err))
		}
		if out.Shape == nil || out.Shape.Name != t.Shape {
			name := "unknown"
			if out.Shape != nil {
				name = out.Shape.Name
			}
			return nil, queue.Permanent(fmt.Errorf("C1 blob %s is of shape %s, the task says %s", t.BlobRef, name, t.Shape))
		}
		c.put(key, out)
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*c1.Output), nil
}

func (c *inputCache) put(key string, out *c1.Output) {
	if c.size == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return
	}
	c.m[key] = out
	c.order = append(c.order, key)
	for len(c.order) > c.size {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}
