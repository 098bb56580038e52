package data

import (
	"bytes"
	"testing"
)

// The parsers face files from anywhere: whatever the bytes, they must return
// an error or a consistent dataset, never panic, and allocate in proportion
// to the input rather than to what a header claims. Seed corpora live in
// testdata/fuzz/; run e.g. `go test -fuzz=FuzzIDX ./data/` to explore.

func FuzzIDX(f *testing.F) {
	f.Add(EncodeIDX([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}), uint8(3), true)
	f.Add(EncodeIDX([]int{3}, []byte{0, 9, 4}), uint8(1), false)
	f.Add(EncodeIDX([]int{1 << 30, 28, 28}, []byte{1}), uint8(3), false)
	f.Add([]byte{0, 0, 8}, uint8(1), true)
	f.Fuzz(func(t *testing.T, b []byte, ndim uint8, sized bool) {
		n := int(ndim%4) + 1
		size := int64(-1)
		if sized {
			size = int64(len(b))
		}
		dims, payload, err := readIDX(bytes.NewReader(b), n, size)
		if err != nil {
			return
		}
		total := 1
		for _, d := range dims {
			total *= d
		}
		if len(dims) != n || len(payload) != total || 4+4*n+total != len(b) {
			t.Fatalf("dims %v and %d payload bytes from a %d-byte input", dims, len(payload), len(b))
		}
	})
}

func FuzzCIFAR(f *testing.F) {
	f.Add(cifarRecords(2, func(i int) byte { return byte(i) }))
	f.Add(cifarRecords(1, func(int) byte { return 200 }))
	f.Add([]byte{3, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := checkCIFARSize(int64(len(b))); err != nil {
			return
		}
		n := len(b) / CIFARRecordSize
		labels := make([]uint8, n)
		pix := make([]byte, n*cifarPixels)
		if err := decodeCIFAR(bytes.NewReader(b), labels, pix); err != nil {
			return
		}
		for i, l := range labels {
			if l >= cifarClasses || l != b[i*CIFARRecordSize] {
				t.Fatalf("record %d: label %d from byte %d", i, l, b[i*CIFARRecordSize])
			}
		}
	})
}

func FuzzLibSVM(f *testing.F) {
	f.Add([]byte("+1 1:0.5 3:1\n-1 2:2\n"), uint16(0))
	f.Add([]byte("0 4:1e3 # c\n\n1\n"), uint16(4))
	f.Add([]byte("1 3:1 2:1\n"), uint16(0))
	f.Add([]byte("1 2147483647:1\n"), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, features uint16) {
		d, err := parseLibSVM(bytes.NewReader(b), int(features))
		if err != nil {
			return
		}
		if len(d.RowPtr) != d.Len()+1 || d.RowPtr[0] != 0 || d.RowPtr[d.Len()] != len(d.Cols) || len(d.Cols) != len(d.Vals) {
			t.Fatalf("inconsistent CSR: %d rows, row pointers %v, %d cols, %d vals", d.Len(), d.RowPtr, len(d.Cols), len(d.Vals))
		}
		if features > 0 && d.Shape[0] != int(features) {
			t.Fatalf("shape %v, want [%d]", d.Shape, features)
		}
		if features == 0 && d.Shape[0] > MaxInferredFeatures {
			t.Fatalf("inferred shape %v, above the bound %d", d.Shape, MaxInferredFeatures)
		}
		for i := range d.Len() {
			if d.Labels[i] > 1 {
				t.Fatalf("label %d", d.Labels[i])
			}
			cols, _ := d.Sparse(i)
			for k, c := range cols {
				if c < 0 || int(c) >= d.Shape[0] || (k > 0 && c <= cols[k-1]) {
					t.Fatalf("row %d: columns %v outside [0, %d) or not increasing", i, cols, d.Shape[0])
				}
			}
		}
	})
}
