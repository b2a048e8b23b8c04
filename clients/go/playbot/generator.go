package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The project's documented generator (sniff/prng.py): xoshiro256** seeded by SplitMix64, with
// Lemire's unbiased index. Written out here so that a seat of this bot seeded as the engine
// seeds its bots (botSeed) breaks ties exactly as sniff.bots does, and a test can compare a
// match played here with the same match played in process, move for move.
type generator struct{ s0, s1, s2, s3 uint64 }

func splitmix64(x uint64) (uint64, uint64) {
	x += 0x9E3779B97F4A7C15
	z := x
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return x, z ^ (z >> 31)
}

func newGenerator(seed uint64) *generator {
	g := &generator{}
	x := seed
	x, g.s0 = splitmix64(x)
	x, g.s1 = splitmix64(x)
	x, g.s2 = splitmix64(x)
	_, g.s3 = splitmix64(x)
	return g
}

func (g *generator) next() uint64 {
	result := bits.RotateLeft64(g.s1*5, 7) * 9
	t := g.s1 << 17
	g.s2 ^= g.s0
	g.s3 ^= g.s1
	g.s1 ^= g.s2
	g.s0 ^= g.s3
	g.s2 ^= t
	g.s3 = bits.RotateLeft64(g.s3, 45)
	return result
}

// below is a uniform index in [0, n) for 1 <= n < 2^32.
func (g *generator) below(n int) int {
	un := uint64(n)
	hi, low := bits.Mul64(g.next(), un)
	if low < un {
		threshold := -un % un
		for low < threshold {
			hi, low = bits.Mul64(g.next(), un)
		}
	}
	return int(hi)
}

// botSeed is sniff.seeds.bot_seed: the seed of the bot of `seat` in a match seeded `seed`.
func botSeed(seed uint64, seat uint32) uint64 {
	sum := sha256.Sum256([]byte(fmt.Sprintf("sniff/bot/v1\x00%d\x00%d", seed, seat)))
	return binary.BigEndian.Uint64(sum[:8])
}
