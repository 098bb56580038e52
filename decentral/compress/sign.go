package compress

import (
	"encoding/binary"
	"math"
)

// sign sends ‖v‖₁/p and the entries' signs.
type sign struct{}

func (sign) String() string    { return "sign" }
func (sign) Size(p int) int    { return 4 + (p+7)/8 }
func (sign) Scale(int) float64 { return 1 }

// Encode writes s = ‖v‖₁/p (summed in float64) as a float32, then one bit
// per entry, set where v_i < 0. A v with a NaN or ±Inf entry gives a
// message whose scale Decode rejects.
func (c sign) Encode(dst []byte, v []float32, _ uint64) []byte {
	dst, b := extend(dst, c.Size(len(v)))
	var s float32
	if len(v) > 0 {
		s = float32(sumAbs(v) / float64(len(v)))
	}
	binary.LittleEndian.PutUint32(b, math.Float32bits(s))
	packed := b[4:]
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := v[i : i+8 : i+8]
		packed[i/8] = byte(negBit(w[0]) | negBit(w[1])<<1 | negBit(w[2])<<2 | negBit(w[3])<<3 |
			negBit(w[4])<<4 | negBit(w[5])<<5 | negBit(w[6])<<6 | negBit(w[7])<<7)
	}
	if i < len(v) {
		var last uint32
		for t, x := range v[i:] {
			last |= negBit(x) << t
		}
		packed[i/8] = byte(last)
	}
	return dst
}

// Decode checks the scale and the pad bits, then sets each entry to ±s.
func (c sign) Decode(out []float32, msg []byte) error {
	p := len(out)
	if len(msg) != c.Size(p) {
		return sizeError(c, msg, p)
	}
	s := math.Float32frombits(binary.LittleEndian.Uint32(msg))
	if !finiteNonNeg(s) {
		return scaleError(c, "scale", s)
	}
	packed := msg[4:]
	if !padClear(packed, p) {
		return padError(c, packed[len(packed)-1])
	}
	sb := math.Float32bits(s)
	for i := range out {
		out[i] = math.Float32frombits(sb | uint32(packed[i>>3]>>(i&7)&1)<<31)
	}
	return nil
}

// negBit returns 1 if x < 0, else 0 (±0 count as positive; a NaN counts by
// its sign bit), without a branch.
func negBit(x float32) uint32 {
	b := math.Float32bits(x)
	nonzero := (b&^(1<<31) + 1<<31 - 1) >> 31 // 1 unless x is ±0
	return b >> 31 & nonzero
}

// sumAbs returns ‖v‖₁ summed in float64 (in four interleaved partial sums).
func sumAbs(v []float32) float64 {
	var s [4]float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		w := v[i : i+4 : i+4]
		s[0] += math.Abs(float64(w[0]))
		s[1] += math.Abs(float64(w[1]))
		s[2] += math.Abs(float64(w[2]))
		s[3] += math.Abs(float64(w[3]))
	}
	for _, x := range v[i:] {
		s[0] += math.Abs(float64(x))
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// sumSq returns ‖v‖₂² summed in float64 (in four interleaved partial sums).
func sumSq(v []float32) float64 {
	var s [4]float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		w := v[i : i+4 : i+4]
		s[0] += float64(float64(w[0]) * float64(w[0]))
		s[1] += float64(float64(w[1]) * float64(w[1]))
		s[2] += float64(float64(w[2]) * float64(w[2]))
		s[3] += float64(float64(w[3]) * float64(w[3]))
	}
	for _, x := range v[i:] {
		s[0] += float64(float64(x) * float64(x))
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}
