package data

import (
	"math"
	"testing"
)

// TestDenseNormalised checks Dense on standardised bytes, bit for bit,
// against (b/255 − mean[c]) / std[c], for channels smaller and larger than
// its 256-value table.
func TestDenseNormalised(t *testing.T) {
	for _, shape := range [][]int{{3, 4, 4}, {3, 16, 16}, {3, 17, 16}, {3, 32, 32}, {1, 28, 28}} {
		d := &Dataset{Shape: shape, Labels: make([]uint8, 2), Mean: []float32{0.49, 0.48, 0.45}[:shape[0]], Std: []float32{0.247, 0.243, 0.261}[:shape[0]]}
		dim := d.Dim()
		d.Bytes = make([]uint8, 2*dim)
		for k := range d.Bytes {
			d.Bytes[k] = uint8(k*37 + k/256)
		}
		x := make([]float32, dim)
		per := dim / shape[0]
		for i := range 2 {
			d.Dense(i, x)
			for k, v := range x {
				c := k / per
				b := d.Bytes[i*dim+k]
				want := (float32(float32(b)*(1.0/255)) - d.Mean[c]) / d.Std[c]
				if math.Float32bits(v) != math.Float32bits(want) {
					t.Fatalf("shape %v sample %d feature %d (byte %d): %v, want %v", shape, i, k, b, v, want)
				}
			}
		}
	}
}

// BenchmarkDenseNormalised times Dense on a CIFAR-10 batch of 128
// standardised images:
//
//	go test ./data/ -run '^$' -bench DenseNormalised
func BenchmarkDenseNormalised(b *testing.B) {
	d := &Dataset{Shape: []int{3, 32, 32}, Labels: make([]uint8, 128), Mean: []float32{0.49, 0.48, 0.45}, Std: []float32{0.247, 0.243, 0.261}}
	d.Bytes = make([]uint8, 128*d.Dim())
	for k := range d.Bytes {
		d.Bytes[k] = uint8(k * 7)
	}
	x := make([]float32, d.Dim())
	for b.Loop() {
		for i := range d.Len() {
			d.Dense(i, x)
		}
	}
}
