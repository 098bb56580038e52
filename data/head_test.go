package data

import (
	"slices"
	"testing"
)

func TestHead(t *testing.T) {
	dense := &Dataset{Name: "d", Shape: []int{2}, Classes: 3, Labels: []uint8{0, 1, 2},
		Floats: []float32{1, 2, 3, 4, 5, 6}}
	bytes := &Dataset{Name: "b", Shape: []int{1, 1, 2}, Classes: 3, Labels: []uint8{0, 1, 2},
		Bytes: []uint8{0, 255, 51, 102, 0, 0}}
	sparse := &Dataset{Name: "s", Shape: []int{4}, Classes: 2, Labels: []uint8{1, 0, 1},
		RowPtr: []int{0, 1, 3, 4}, Cols: []int32{0, 1, 3, 2}, Vals: []float32{1, 2, 3, 4}}
	for _, d := range []*Dataset{dense, bytes, sparse} {
		for _, n := range []int{-1, 0, 1, 2, 3, 7} {
			h := d.Head(n)
			want := n
			if n <= 0 || n > d.Len() {
				want = d.Len()
			}
			if h.Len() != want {
				t.Fatalf("%s.Head(%d).Len() = %d, want %d", d.Name, n, h.Len(), want)
			}
			got, ref := make([]float32, d.Dim()), make([]float32, d.Dim())
			for i := range want {
				h.Dense(i, got)
				d.Dense(i, ref)
				if !slices.Equal(got, ref) || h.Labels[i] != d.Labels[i] {
					t.Errorf("%s.Head(%d) sample %d = %v label %d, want %v label %d", d.Name, n, i, got, h.Labels[i], ref, d.Labels[i])
				}
			}
		}
	}
	if h := sparse.Head(2); len(h.RowPtr) != 3 {
		t.Errorf("sparse Head(2) keeps %d row pointers, want 3", len(h.RowPtr))
	}
}
