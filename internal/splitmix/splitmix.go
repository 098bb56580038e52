// Package splitmix is SplitMix64 (Steele, Lea and Flood 2014), the hash
// that derives a run's independent random keys from its seed: the
// partition's and each node's streams, the augmentation of a minibatch,
// Dropout's masks, the compressors' and the attacks' noise. Integer
// arithmetic only, so the same bits on every architecture.
package splitmix

// Gamma is SplitMix64's increment, ⌊2⁶⁴/φ⌋ rounded to odd.
const Gamma = 0x9e3779b97f4a7c15

// Mix is SplitMix64's finaliser: a bijection of uint64 with good
// avalanche.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Hash is the output of a SplitMix64 generator in state x, Mix(x + Gamma):
// successive outputs of a generator seeded with s are Hash(s),
// Hash(s + Gamma), Hash(s + 2·Gamma), ….
func Hash(x uint64) uint64 { return Mix(x + Gamma) }
