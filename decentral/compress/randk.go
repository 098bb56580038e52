package compress

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
)

// randKStream is the PCG stream (second seed word) of rand-k's index draws.
const randKStream = 0x72616e646b5f6964 // "randk_id"

// randK keeps K(f, p) entries drawn uniformly without replacement.
type randK struct{ f float64 }

func (c randK) String() string  { return "randk:" + strconv.FormatFloat(c.f, 'g', -1, 64) }
func (c randK) Size(p int) int  { return 8 + 4*K(c.f, p) }
func (randK) Scale(int) float64 { return 1 }

// Encode writes seed, then the values at the indices sampler(seed) draws.
func (c randK) Encode(dst []byte, v []float32, seed uint64) []byte {
	k := K(c.f, len(v))
	dst, b := extend(dst, 8+4*k)
	binary.LittleEndian.PutUint64(b, seed)
	s := newSampler(seed, len(v), k)
	for j := range k {
		binary.LittleEndian.PutUint32(b[8+4*j:], math.Float32bits(v[s.next()]))
	}
	return dst
}

// Decode zeroes out, then sets the entries at the indices the message's seed
// draws.
func (c randK) Decode(out []float32, msg []byte) error {
	p := len(out)
	if len(msg) != c.Size(p) {
		return sizeError(c, msg, p)
	}
	k := K(c.f, p)
	s := newSampler(binary.LittleEndian.Uint64(msg), p, k)
	clear(out)
	for j := range k {
		out[s.next()] = math.Float32frombits(binary.LittleEndian.Uint32(msg[8+4*j:]))
	}
	return nil
}

// sampler draws k of the indices 0, …, p−1 uniformly without replacement,
// in increasing order, by selection sampling (Knuth's Algorithm S): it keeps
// index i with probability need/(p−i), need being how many are still to
// draw. One pass over 0, …, p−1, O(p), with only integer arithmetic, so
// every platform draws the same indices.
//
// Each keep-or-skip is decided exactly and lazily: with U uniform in
// [0, 1), keep iff U < need/(p−i), reading U's binary digits 8 at a time
// from the PCG's outputs (lowest byte first) until they settle the
// comparison, which 8 bits do but for a 1/256 chance. So a pass costs about
// p/8 PCG outputs.
type sampler struct {
	g       rand.PCG
	i, left uint64 // next candidate, candidates left (p − i)
	need    uint64 // indices still to draw
	buf     uint64 // random bits not yet used, lowest first
	nbuf    uint   // how many
}

// newSampler returns a sampler of k of p indices seeded by seed.
func newSampler(seed uint64, p, k int) sampler {
	s := sampler{left: uint64(p), need: uint64(k)}
	s.g.Seed(seed, randKStream)
	return s
}

// next returns the next drawn index; it must be called at most k times.
func (s *sampler) next() int {
	// Work on locals so the loop keeps its state in registers.
	i, left, need := s.i, s.left, s.need
	buf, nbuf := s.buf, s.nbuf
	for {
		// Compare U with num/left, num < 2⁵⁵: the next byte x of U's
		// digits puts U in [x, x+1)/256.
		num, keep := need, false
		for {
			if nbuf == 0 {
				buf, nbuf = s.g.Uint64(), 64
			}
			x := buf & 0xff
			buf >>= 8
			nbuf -= 8
			t, lo := num<<8, x*left
			if lo >= t { // U ≥ num/left
				break
			}
			if lo+left <= t { // U < num/left
				keep = true
				break
			}
			num = t - lo // U's remaining digits against num/left, num < left
		}
		i++
		left--
		if keep {
			s.i, s.left, s.need = i, left, need-1
			s.buf, s.nbuf = buf, nbuf
			return int(i - 1)
		}
	}
}
