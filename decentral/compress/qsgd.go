package compress

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
)

// qsgdStream is the PCG stream (second seed word) of QSGD's dithering.
const qsgdStream = 0x717367645f646974 // "qsgd_dit"

// qsgd quantises every entry to one of s+1 levels of the vector's norm.
type qsgd struct {
	s     int  // levels S
	width uint // bits per entry: 1 sign bit + bits.Len(S) level bits
}

// newQSGD returns qsgd:s, 1 ≤ s ≤ maxLevels.
func newQSGD(s int) qsgd { return qsgd{s: s, width: 1 + uint(bits.Len(uint(s)))} }

func (c qsgd) String() string { return "qsgd:" + strconv.Itoa(c.s) }
func (c qsgd) Size(p int) int { return 4 + (p*int(c.width)+7)/8 }

// Scale returns 1/(1 + ω), ω = min(p/S², √p/S).
func (c qsgd) Scale(p int) float64 {
	s := float64(c.s)
	omega := min(float64(p)/(s*s), math.Sqrt(float64(p))/s)
	return 1 / (1 + omega)
}

// Encode writes n = ‖v‖₂ as a float32, then each entry's code
// sign | l<<1, l = ⌊S·|v_i|/n + u⌋, using the stored n so that ±n·l/S is an
// unbiased estimate of v_i. u is uniform on the multiples of 2⁻³² in
// [0, 1): entry i takes the low (i even) or high (i odd) half of output
// ⌊i/2⌋ of a PCG seeded by (seed, qsgdStream). A v with a NaN or ±Inf entry
// gives a message whose norm Decode rejects.
func (c qsgd) Encode(dst []byte, v []float32, seed uint64) []byte {
	dst, b := extend(dst, c.Size(len(v)))
	n := float32(math.Sqrt(sumSq(v)))
	binary.LittleEndian.PutUint32(b, math.Float32bits(n))
	packed := b[4:]
	if n == 0 {
		clear(packed)
		return dst
	}
	var g rand.PCG
	g.Seed(seed, qsgdStream)
	scale := float64(c.s) / float64(n)
	maxL := uint64(c.s)
	var acc uint64 // pending bits, the lowest first
	var nacc uint  // how many
	o := 0
	var r uint64 // random bits: two draws of u per PCG output
	for i, x := range v {
		if i&1 == 0 {
			r = g.Uint64()
		} else {
			r >>= 32
		}
		u := float64(float64(uint32(r)) * 0x1p-32)
		// Through int64, one instruction on amd64; min catches a level above
		// S from rounding of the product, or any from a non-finite v.
		l := min(uint64(int64(float64(math.Abs(float64(x))*scale)+u)), maxL)
		code := l<<1 | uint64(negBit(x))
		acc |= code << nacc
		nacc += c.width
		if nacc >= 32 {
			binary.LittleEndian.PutUint32(packed[o:], uint32(acc))
			o += 4
			acc >>= 32
			nacc -= 32
		}
	}
	for ; nacc > 0; nacc -= min(nacc, 8) {
		packed[o] = byte(acc)
		o++
		acc >>= 8
	}
	return dst
}

// Decode checks the norm, the levels and the pad bits, then sets each entry
// to ±n·l/S.
func (c qsgd) Decode(out []float32, msg []byte) error {
	p := len(out)
	if len(msg) != c.Size(p) {
		return sizeError(c, msg, p)
	}
	n := math.Float32frombits(binary.LittleEndian.Uint32(msg))
	if !finiteNonNeg(n) {
		return scaleError(c, "norm", n)
	}
	packed := msg[4:]
	if !padClear(packed, p*int(c.width)) {
		return padError(c, packed[len(packed)-1])
	}
	if c.s != 1<<(c.width-1)-1 { // some level codes lie above S
		r := unpacker{packed: packed, width: c.width}
		for i := range p {
			if l := r.next() >> 1; l > uint64(c.s) {
				return fmt.Errorf("compress: %s message entry %d has level %d: want ≤ %d", c, i, l, c.s)
			}
		}
	}
	step := float64(n) / float64(c.s)
	r := unpacker{packed: packed, width: c.width}
	for i := range out {
		code := r.next()
		mag := float32(step * float64(code>>1))
		out[i] = math.Float32frombits(math.Float32bits(mag) | uint32(code&1)<<31)
	}
	return nil
}

// unpacker reads width-bit codes, lowest bits first, from a packed stream
// that holds enough of them.
type unpacker struct {
	packed []byte
	width  uint
	acc    uint64
	nacc   uint
	o      int
}

// next returns the next code.
func (r *unpacker) next() uint64 {
	for r.nacc < r.width {
		r.acc |= uint64(r.packed[r.o]) << r.nacc
		r.o++
		r.nacc += 8
	}
	code := r.acc & (1<<r.width - 1)
	r.acc >>= r.width
	r.nacc -= r.width
	return code
}
