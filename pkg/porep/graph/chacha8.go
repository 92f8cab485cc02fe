package graph

import (
	"encoding/binary"
	"math/bits"
)

// chacha8 is the random stream of rand_chacha's ChaCha8Rng::from_seed: the
// ChaCha block function with 8 rounds, the 32-byte seed as key, a 64-bit block
// counter in state words 12–13 starting at 0 and a zero 64-bit stream id in
// words 14–15. next_u64 takes two consecutive output words, low first.
//
// No Go library implements this generator: golang.org/x/crypto/chacha20 is
// 20-round only and math/rand/v2's ChaCha8 is a different construction.
type chacha8 struct {
	doubleRounds int // 4 for ChaCha8 (20-round mode exists only to test against x/crypto/chacha20)
	key          [8]uint32
	counter      uint64
	buf          [16]uint32
	pos          int
}

func newChaCha8(seed *[32]byte) *chacha8 {
	c := &chacha8{pos: 16, doubleRounds: 4}
	for i := range c.key {
		c.key[i] = binary.LittleEndian.Uint32(seed[4*i:])
	}
	return c
}

func (c *chacha8) refill() {
	s := [16]uint32{
		0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
		c.key[0], c.key[1], c.key[2], c.key[3], c.key[4], c.key[5], c.key[6], c.key[7],
		uint32(c.counter), uint32(c.counter >> 32), 0, 0,
	}
	x := s
	qr := func(a, b, cc, d int) {
		x[a] += x[b]
		x[d] = bits.RotateLeft32(x[d]^x[a], 16)
		x[cc] += x[d]
		x[b] = bits.RotateLeft32(x[b]^x[cc], 12)
		x[a] += x[b]
		x[d] = bits.RotateLeft32(x[d]^x[a], 8)
		x[cc] += x[d]
		x[b] = bits.RotateLeft32(x[b]^x[cc], 7)
	}
	for range c.doubleRounds {
		qr(0, 4, 8, 12)
		qr(1, 5, 9, 13)
		qr(2, 6, 10, 14)
		qr(3, 7, 11, 15)
		qr(0, 5, 10, 15)
		qr(1, 6, 11, 12)
		qr(2, 7, 8, 13)
		qr(3, 4, 9, 14)
	}
	for i := range x {
		c.buf[i] = x[i] + s[i]
	}
	c.counter++
	c.pos = 0
}

func (c *chacha8) nextU32() uint32 {
	if c.pos == 16 {
		c.refill()
	}
	v := c.buf[c.pos]
	c.pos++
	return v
}

func (c *chacha8) nextU64() uint64 {
	lo := c.nextU32()
	hi := c.nextU32()
	return uint64(hi)<<32 | uint64(lo)
}
