package data

import "math/rand/v2"

// Stream tags keep the random streams derived from one run seed apart: the
// partition's shuffle and each node's minibatch stream never coincide.
const (
	streamPartition uint64 = 0x7061727469 // "parti"
	streamSampler   uint64 = 0x73616d706c // "sampl"
)

// splitMix64 is the SplitMix64 finaliser: a bijective mix of x with good
// avalanche, used to derive independent seeds from (seed, stream, id).
func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pcgSeeds derives the two PCG seed words for stream tag and id from seed.
func pcgSeeds(seed, tag, id uint64) (uint64, uint64) {
	a := splitMix64(seed ^ splitMix64(tag) ^ splitMix64(splitMix64(id)+tag))
	return a, splitMix64(a ^ 0x6a09e667f3bcc909)
}

// newPCG returns a PCG generator for stream tag and id derived from seed.
func newPCG(seed, tag, id uint64) *rand.PCG {
	return rand.NewPCG(pcgSeeds(seed, tag, id))
}
