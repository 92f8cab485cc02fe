package groth16

import (
	"math/bits"
	"sync/atomic"
)

// Bitmap is a fixed-length bit set, bit i at word i/64, position i%64.
type Bitmap struct {
	Len   int
	Words []uint64
}

// NewBitmap returns an all-zero bitmap of n bits.
func NewBitmap(n int) Bitmap {
	return Bitmap{Len: n, Words: make([]uint64, (n+63)/64)}
}

// Set sets bit i.
func (b Bitmap) Set(i int) { b.Words[i>>6] |= 1 << (uint(i) & 63) }

// setAtomic sets bit i; safe beside other setAtomic calls on the bitmap.
func (b Bitmap) setAtomic(i int) { atomic.OrUint64(&b.Words[i>>6], 1<<(uint(i)&63)) }

// Get reports bit i.
func (b Bitmap) Get(i int) bool { return b.Words[i>>6]&(1<<(uint(i)&63)) != 0 }

// Count returns the number of set bits.
func (b Bitmap) Count() int {
	n := 0
	for _, w := range b.Words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Valid reports whether the bitmap has exactly the words for Len bits and
// no bit set at or beyond Len.
func (b Bitmap) Valid() bool {
	if b.Len < 0 || len(b.Words) != (b.Len+63)/64 {
		return false
	}
	if r := b.Len % 64; r != 0 && b.Words[len(b.Words)-1]>>r != 0 {
		return false
	}
	return true
}
