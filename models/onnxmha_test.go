package models

import (
	"slices"
	"testing"
)

// TestBatchScaled folds the shape arithmetic of nn.MultiheadAttention on
// multiples of the batch size, and refuses what is no multiple.
func TestBatchScaled(t *testing.T) {
	n := int64(batchDim)
	for _, c := range []struct {
		a, b   []int64
		divide bool
		want   []int64 // nil: refused
	}{
		{[]int64{n}, []int64{2}, false, []int64{batchMul(2)}},          // N·h
		{[]int64{17}, []int64{n}, false, []int64{batchMul(17)}},        // T·N
		{[]int64{batchMul(6)}, []int64{3}, true, []int64{batchMul(2)}}, // (6N)/3
		{[]int64{n, 16}, []int64{4}, false, []int64{batchMul(4), 64}},  // a shape times 4
		{[]int64{batchMul(3)}, []int64{2}, true, nil},                  // 3N/2
		{[]int64{n}, []int64{n}, false, nil},                           // N²
		{[]int64{n}, []int64{-1}, false, nil},                          // −N
		{[]int64{2}, []int64{n}, true, nil},                            // 2/N
		{[]int64{4}, []int64{2}, false, nil},                           // no batch: elementwise's
		{[]int64{n}, []int64{maxBatchMul}, false, nil},                 // past batchMul's range
	} {
		got, ok := batchScaled(&iconst{dims: []int{len(c.a)}, i: c.a}, &iconst{dims: []int{len(c.b)}, i: c.b}, c.divide)
		switch {
		case c.want == nil && ok:
			t.Errorf("%v, %v (divide %v): folded to %v, want refused", c.a, c.b, c.divide, got.i)
		case c.want != nil && (!ok || !slices.Equal(got.i, c.want)):
			t.Errorf("%v, %v (divide %v): %v (%v), want %v", c.a, c.b, c.divide, got, ok, c.want)
		}
	}
	for k := int64(1); k < 5; k++ {
		if batchFactor(batchMul(k)) != k {
			t.Errorf("batchFactor(batchMul(%d)) = %d", k, batchFactor(batchMul(k)))
		}
	}
	if batchFactor(-1) != 0 || batchFactor(7) != 0 {
		t.Errorf("batchFactor of plain numbers is not 0")
	}
}
