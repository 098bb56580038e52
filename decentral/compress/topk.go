package compress

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// topK keeps the K(f, p) entries of largest magnitude.
type topK struct{ f float64 }

func (c topK) String() string  { return "topk:" + strconv.FormatFloat(c.f, 'g', -1, 64) }
func (c topK) Size(p int) int  { return 8 * K(c.f, p) }
func (topK) Scale(int) float64 { return 1 }

// magKey returns the bits of |x|, which order as |x| does for non-NaN x
// (NaN keys sort above +Inf's).
func magKey(x float32) uint32 { return math.Float32bits(x) &^ (1 << 31) }

// block is how many entries the scans below test at once: a block whose
// largest (or smallest) key shows no entry can matter is skipped with one
// well-predicted branch.
const block = 8

// blockMax returns the largest magKey of b, len(b) = block.
func blockMax(b []float32) uint32 {
	b = b[:block]
	return max(max(magKey(b[0]), magKey(b[1]), magKey(b[2]), magKey(b[3])),
		max(magKey(b[4]), magKey(b[5]), magKey(b[6]), magKey(b[7])))
}

// Encode writes the indices, then the values, of the entries selectTop picks.
func (c topK) Encode(dst []byte, v []float32, _ uint64) []byte {
	k := K(c.f, len(v))
	dst, b := extend(dst, 8*k)
	if k == 0 {
		return dst
	}
	prefix, shift, ties := selectTop(v, k)
	e := emitter{idx: b[:4*k], val: b[4*k:], top: prefix >> shift, shift: shift, ties: ties}
	least := e.top << shift // no key below it is kept
	i := 0
	for ; i+block <= len(v); i += block {
		if blockMax(v[i:]) >= least {
			for t, x := range v[i : i+block] {
				e.add(i+t, x)
			}
		}
	}
	for ; i < len(v); i++ {
		e.add(i, v[i])
	}
	return dst
}

// emitter writes the entries selectTop picks to a top-k message.
type emitter struct {
	idx, val []byte
	j        int    // entries written
	top      uint32 // key>>shift of the least kept key
	shift    uint
	ties     int // entries with key>>shift == top still to keep
}

// add writes v[i] = x if it is kept.
func (e *emitter) add(i int, x float32) {
	h := magKey(x) >> e.shift
	if h < e.top {
		return
	}
	if h == e.top {
		if e.ties == 0 {
			return
		}
		e.ties--
	}
	binary.LittleEndian.PutUint32(e.idx[4*e.j:], uint32(i))
	binary.LittleEndian.PutUint32(e.val[4*e.j:], math.Float32bits(x))
	e.j++
}

// selectTop finds the k entries of v (1 ≤ k ≤ len(v)) of largest magnitude,
// ties going to the lower index, in O(len(v)) time and no memory beyond a
// 32 KiB stack frame: they are every entry whose key (magKey) has
// key>>shift > prefix>>shift, and the first ties entries in index order
// whose key has key>>shift == prefix>>shift.
//
// It is a most-significant-digit radix select over the 31-bit keys in three
// digits of 11, 10 and 10 bits: each pass counts, among the entries that
// share the digits fixed so far, how many have each value of the next
// digit, then fixes the digit holding the k-th largest key. It stops early
// once every entry sharing the fixed digits is kept.
func selectTop(v []float32, k int) (prefix uint32, shift uint, ties int) {
	need := k
	if need == len(v) {
		return 0, 31, need // keep everything: every key>>31 is 0
	}
	// The first pass counts every entry, alternating between two tables so
	// that runs of entries in one bucket do not wait on each other's stores.
	var hist, hist2 [1 << 11]int
	shift = 20
	i := 0
	for ; i+1 < len(v); i += 2 {
		hist[magKey(v[i])>>shift]++
		hist2[magKey(v[i+1])>>shift]++
	}
	if i < len(v) {
		hist[magKey(v[i])>>shift]++
	}
	h := hist[:]
	for d := range h {
		h[d] += hist2[d]
	}
	for {
		d := len(h) - 1
		for ; h[d] < need; d-- {
			need -= h[d]
		}
		prefix |= uint32(d) << shift
		if h[d] == need || shift == 0 {
			return prefix, shift, need
		}
		// The next pass counts the keys in [prefix, prefix+width), those
		// sharing the digits fixed so far, by their next 10 bits.
		width := uint32(1) << shift
		shift -= 10
		h = hist[:1<<10]
		clear(h)
		count := func(x float32) {
			if key := magKey(x) - prefix; key < width {
				h[key>>shift]++
			}
		}
		j := 0
		for ; j+block <= len(v); j += block {
			b := v[j : j+block : j+block]
			low := min(min(magKey(b[0])-prefix, magKey(b[1])-prefix, magKey(b[2])-prefix, magKey(b[3])-prefix),
				min(magKey(b[4])-prefix, magKey(b[5])-prefix, magKey(b[6])-prefix, magKey(b[7])-prefix))
			if low < width {
				for _, x := range b {
					count(x)
				}
			}
		}
		for _, x := range v[j:] {
			count(x)
		}
	}
}

// Decode checks the indices are increasing and below p, zeroes out, then sets
// the kept entries.
func (c topK) Decode(out []float32, msg []byte) error {
	p := len(out)
	if len(msg) != c.Size(p) {
		return sizeError(c, msg, p)
	}
	k := len(msg) / 8
	idx, val := msg[:4*k], msg[4*k:]
	prev := int64(-1)
	for j := range k {
		i := int64(binary.LittleEndian.Uint32(idx[4*j:]))
		if i >= int64(p) {
			return fmt.Errorf("compress: %s message index #%d is %d: want < p = %d", c, j, i, p)
		}
		if i <= prev {
			return fmt.Errorf("compress: %s message index #%d is %d after %d: want increasing indices", c, j, i, prev)
		}
		prev = i
	}
	clear(out)
	for j := range k {
		i := binary.LittleEndian.Uint32(idx[4*j:])
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(val[4*j:]))
	}
	return nil
}
