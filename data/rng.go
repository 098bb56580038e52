package data

import (
	"math/rand/v2"

	"github.com/gtstorm/gtstorm/internal/splitmix"
)

// Stream tags keep the random streams derived from one run seed apart: the
// partition's shuffle and each node's minibatch stream never coincide.
const (
	streamPartition uint64 = 0x7061727469 // "parti"
	streamSampler   uint64 = 0x73616d706c // "sampl"
)

// pcgSeeds derives the two PCG seed words for stream tag and id from seed.
func pcgSeeds(seed, tag, id uint64) (uint64, uint64) {
	a := splitmix.Hash(seed ^ splitmix.Hash(tag) ^ splitmix.Hash(splitmix.Hash(id)+tag))
	return a, splitmix.Hash(a ^ 0x6a09e667f3bcc909)
}

// newPCG returns a PCG generator for stream tag and id derived from seed.
func newPCG(seed, tag, id uint64) *rand.PCG {
	return rand.NewPCG(pcgSeeds(seed, tag, id))
}
