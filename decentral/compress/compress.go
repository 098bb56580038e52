// Package compress holds the message compressors of compressed gossip
// (CHOCO-SGD, SPEC §9): each turns a node's p-float vector into a byte
// message whose size is fixed by p, and the message back into a vector.
//
// [Parse] returns a [Compressor] from its spec:
//
//   - none: the raw float32s, 4p bytes; decoding is bit-exact.
//   - topk:F: the k = [K](F, p) entries of largest magnitude (ties go to the
//     lower index; NaN counts as larger than +Inf): k uint32 indices in
//     increasing order, then the k float32 values, 8k bytes.
//   - randk:F: k = [K](F, p) distinct indices drawn uniformly without
//     replacement by a PCG seeded from the message's seed: the uint64 seed,
//     then the k float32 values at those indices in increasing index order,
//     8 + 4k bytes. Values are not rescaled. The draw uses integer
//     arithmetic only, so every platform decodes the same indices.
//   - qsgd:S: QSGD with S levels and the whole vector's norm: the float32
//     n = ‖v‖₂ (summed in float64), then for each entry, densely packed in
//     b = 1 + bits.Len(S) bits, a code whose lowest bit is the sign (set =
//     negative) and whose upper b−1 bits are the level
//     l = ⌊S·|v_i|/n + u⌋ ∈ {0, …, S}, u uniform in [0, 1) drawn from a PCG
//     seeded by the seed; 4 + ⌈p·b/8⌉ bytes. The entry decodes to ±n·l/S,
//     an unbiased estimate of v_i.
//   - sign: scaled sign: the float32 s = ‖v‖₁/p (summed in float64), then
//     p sign bits (set = negative; ±0 count as positive); 4 + ⌈p/8⌉ bytes.
//     Every entry decodes to ±s.
//
// Numbers are little-endian; bit j of a packed bit stream is bit j mod 8
// of byte ⌊j/8⌋, and the pad bits after the last entry are zero. Decode
// rejects, with a one-line error and out left unchanged, a message of the
// wrong length, an index out of range or out of order, a level above S, set
// pad bits, or a norm or scale that is not a finite number ≥ 0 (which is
// what qsgd and sign encode for a v holding a NaN or ±Inf).
//
// A Compressor holds no mutable state and Encode and Decode use no scratch
// memory beyond their arguments and the stack (top-k selects by a radix
// select over the magnitudes' bit patterns, with 32 KiB of counters on the
// stack; rand-k draws its indices already sorted, by selection sampling),
// so one Compressor may be used from any number of goroutines at once.
// Encode does not allocate when dst has room for the message, nor Decode
// unless it returns an error. Each costs O(p).
package compress

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Compressor turns a p-float vector into a byte message and back.
type Compressor interface {
	// String returns the canonical spec it parses from: "none",
	// "topk:0.01", "randk:0.01", "qsgd:7", "sign".
	String() string
	// Encode appends the message compressing v to dst and returns it. seed
	// drives the stochastic compressors (randk, qsgd): the same v and seed
	// give the same message. It must not allocate when
	// cap(dst)-len(dst) >= Size(len(v)).
	Encode(dst []byte, v []float32, seed uint64) []byte
	// Decode sets out (whose length is p) to the vector msg encodes. A
	// message of the wrong length or with bad contents (index out of range,
	// indices not increasing, level above S, NaN/Inf norm...) is a one-line
	// error, never a panic. No allocation.
	Decode(out []float32, msg []byte) error
	// Size returns the length in bytes of every message for p floats (all
	// compressors here have a size fixed by p).
	Size(p int) int
	// Scale returns 1/τ, the factor that makes the compressor a contraction
	// for a p-float vector as CHOCO-SGD needs it (Koloskova, Stich, Jaggi
	// 2019): E‖v − Q(v)/τ‖² ≤ (1 − 1/τ)‖v‖². For unbiased QSGD with
	// variance bound ω = min(p/S², √p/S), τ = 1 + ω; 1 for the others,
	// which are contractions already (top-k, rand-k unscaled, scaled sign,
	// none).
	Scale(p int) float64
}

// maxLevels is the largest S that qsgd:S accepts.
const maxLevels = 65535

// Parse returns the compressor a spec names: none | topk:F | randk:F |
// qsgd:S | sign, with F in (0, 1] and S an integer in [1, 65535].
func Parse(spec string) (Compressor, error) {
	switch spec {
	case "none":
		return none{}, nil
	case "sign":
		return sign{}, nil
	}
	name, arg, ok := strings.Cut(spec, ":")
	switch {
	case ok && (name == "topk" || name == "randk"):
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return nil, fmt.Errorf("compress: spec %q: want %s:F with F a number in (0, 1]", spec, name)
		}
		if name == "topk" {
			return topK{f: f}, nil
		}
		return randK{f: f}, nil
	case ok && name == "qsgd":
		s, err := strconv.Atoi(arg)
		if err != nil || s < 1 || s > maxLevels {
			return nil, fmt.Errorf("compress: spec %q: want qsgd:S with S an integer in [1, %d]", spec, maxLevels)
		}
		return newQSGD(s), nil
	}
	return nil, fmt.Errorf("compress: spec %q: want none, topk:F, randk:F, qsgd:S or sign", spec)
}

// K returns k = max(1, ⌈F·p⌉), the number of entries topk:F and randk:F
// keep of p, where an F·p within rounding of an integer counts as that
// integer. It never exceeds p, and is 0 for p ≤ 0.
func K(f float64, p int) int {
	if p <= 0 {
		return 0
	}
	x := float64(f * float64(p))
	k := math.Ceil(x)
	if r := math.Round(x); math.Abs(x-r) <= 1e-9*r {
		k = r // F·p is an integer but for rounding: 0.07 × 100 keeps 7, not 8
	}
	if !(k >= 1) { // also NaN
		return 1
	}
	if k >= float64(p) {
		return p
	}
	return int(k)
}

// extend returns dst grown by n bytes and those n bytes; it allocates only
// when cap(dst)-len(dst) < n.
func extend(dst []byte, n int) (all, tail []byte) {
	dst = slices.Grow(dst, n)
	m := len(dst)
	dst = dst[:m+n]
	return dst, dst[m:]
}

// sizeError reports a message whose length is not c.Size(p).
func sizeError(c Compressor, msg []byte, p int) error {
	return fmt.Errorf("compress: %s message of %d bytes for p = %d: want %d bytes", c, len(msg), p, c.Size(p))
}

// scaleError reports a leading float32 (norm or scale) that is not a finite
// non-negative number.
func scaleError(c Compressor, what string, x float32) error {
	return fmt.Errorf("compress: %s message %s is %g: want a finite number ≥ 0", c, what, x)
}

// padError reports nonzero pad bits after the last packed entry.
func padError(c Compressor, last byte) error {
	return fmt.Errorf("compress: %s message last byte %#02x has pad bits set: want them zero", c, last)
}

// finiteNonNeg reports whether x is a finite number ≥ 0.
func finiteNonNeg(x float32) bool {
	return x >= 0 && x <= math.MaxFloat32
}

// padClear reports whether the bits of the last byte of packed above the
// first nbits bits of the stream are zero.
func padClear(packed []byte, nbits int) bool {
	r := nbits % 8
	return r == 0 || packed[len(packed)-1]>>r == 0
}

// none sends the raw float32s.
type none struct{}

func (none) String() string    { return "none" }
func (none) Size(p int) int    { return 4 * p }
func (none) Scale(int) float64 { return 1 }

// Encode appends v's float32s.
func (c none) Encode(dst []byte, v []float32, _ uint64) []byte {
	dst, b := extend(dst, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return dst
}

// Decode copies the float32s back.
func (c none) Decode(out []float32, msg []byte) error {
	if len(msg) != c.Size(len(out)) {
		return sizeError(c, msg, len(out))
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(msg[4*i:]))
	}
	return nil
}
