package graphops

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gtstorm/gtstorm/data"
)

// uniform returns n values drawn from U(-scale, scale), fixed by rng.
func uniform(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((2*rng.Float64() - 1) * scale)
	}
	return v
}

// sparseSet returns n sparse rows over dim features with about density·dim
// non-zeros each (at least one) and binary labels.
func sparseSet(seed uint64, n, dim int, density float64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 2))
	d := &data.Dataset{Name: "synthetic-sparse", Shape: []int{dim}, Classes: 2}
	d.Labels = make([]uint8, n)
	d.RowPtr = []int{0}
	for i := 0; i < n; i++ {
		d.Labels[i] = uint8(rng.IntN(2))
		for j := 0; j < dim; j++ {
			if rng.Float64() < density || (j == dim-1 && len(d.Cols) == d.RowPtr[i]) {
				d.Cols = append(d.Cols, int32(j))
				d.Vals = append(d.Vals, float32(rng.NormFloat64()))
			}
		}
		d.RowPtr = append(d.RowPtr, len(d.Cols))
	}
	return d
}

// densify returns d with the same samples stored as dense float32.
func densify(d *data.Dataset) *data.Dataset {
	out := &data.Dataset{Name: d.Name + "-dense", Shape: d.Shape, Classes: d.Classes, Labels: d.Labels}
	out.Floats = make([]float32, d.Len()*d.Dim())
	for i := 0; i < d.Len(); i++ {
		d.Dense(i, out.Floats[i*d.Dim():(i+1)*d.Dim()])
	}
	return out
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// sameBits reports the first difference between got and want, compared as
// bit patterns.
func sameBits(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("value %d is %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}
