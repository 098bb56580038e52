package data

import (
	"runtime"
	"testing"
)

// A plain IDX file whose header claims 10⁹ images (or labels) is refused
// against the file's size before anything is allocated for the claim.
func TestReadIDXFileHugeClaim(t *testing.T) {
	const claim = 1_000_000_000
	for _, tc := range []struct {
		name string
		dims []int
		want []string
	}{
		{"images 1x1", []int{claim, 1, 1}, []string{"1000000000 images of 1x1", "holds 5 data bytes"}},
		{"images 2x2", []int{claim, 2, 2}, []string{"1000000000 images of 2x2", "holds 5 data bytes"}},
		{"images 28x28", []int{claim, 28, 28}, []string{"1000000000 images of 28x28", "not a plausible dataset"}},
		{"labels", []int{claim}, []string{"1000000000 labels", "holds 5 data bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "huge-idx", EncodeIDX(tc.dims, make([]byte, 5)))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			dims, payload, err := readIDXFile(path, len(tc.dims))
			runtime.ReadMemStats(&after)
			if dims != nil || payload != nil {
				t.Fatal("got data along with the error")
			}
			wantErr(t, err, append([]string{path}, tc.want...)...)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Fatalf("allocated %d bytes for a %d-byte file", grew, 4+4*len(tc.dims)+5)
			}
		})
	}
}
