package data

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLoadCIFAR10(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, CIFARDir)
	smallCIFAR(t, dir, 4, 3)
	for _, from := range []string{dir, root} { // the folder itself or the data folder holding it
		train, test, err := LoadCIFAR10(from, false)
		if err != nil {
			t.Fatal(err)
		}
		if train.Len() != 20 || test.Len() != 3 {
			t.Fatalf("%d training and %d test samples, want 20 and 3", train.Len(), test.Len())
		}
		if !slices.Equal(train.Shape, []int{3, 32, 32}) || train.Classes != 10 || train.Mean != nil {
			t.Fatalf("shape %v classes %d mean %v", train.Shape, train.Classes, train.Mean)
		}
		// Sample 6 is record 2 of data_batch_2.bin: label (2+1)%10, pixel k = byte(2*31+k*3).
		if train.Labels[6] != 3 {
			t.Fatalf("label of sample 6 = %d, want 3", train.Labels[6])
		}
		x := make([]float32, cifarPixels)
		train.Dense(6, x)
		for _, k := range []int{0, 1023, 1024, 2048, 3071} {
			if want := float32(byte(2*31+k*3)) * (1.0 / 255); x[k] != want {
				t.Fatalf("sample 6 feature %d (channel %d) = %v, want %v", k, k/1024, x[k], want)
			}
		}
	}
}

func TestCIFARNormalize(t *testing.T) {
	dir := t.TempDir()
	smallCIFAR(t, dir, 5, 4)
	train, test, err := LoadCIFAR10(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(train.Mean) != 3 || &train.Mean[0] != &test.Mean[0] {
		t.Fatal("training and test sets must share the training set's channel statistics")
	}
	x := make([]float32, train.Dim())
	var sum, sq [3]float64
	for i := range train.Len() {
		train.Dense(i, x)
		for k, v := range x {
			sum[k/1024] += float64(v)
			sq[k/1024] += float64(v) * float64(v)
		}
	}
	n := float64(train.Len() * 1024)
	for c := range 3 {
		m := sum[c] / n
		s := math.Sqrt(sq[c]/n - m*m)
		if math.Abs(m) > 1e-4 || math.Abs(s-1) > 1e-4 {
			t.Fatalf("channel %d after normalising: mean %v std %v, want 0 and 1", c, m, s)
		}
	}
	// The test set uses the training statistics, not its own.
	test.Dense(0, x)
	raw := float64(byte(0)) / 255
	if want := (raw - float64(train.Mean[0])) / float64(train.Std[0]); math.Abs(float64(x[0])-want) > 1e-5 {
		t.Fatalf("test feature 0 = %v, want %v", x[0], want)
	}
	if err := NormalizeChannels(&Dataset{Name: "sparse", Shape: []int{3}, RowPtr: []int{0}}); err == nil {
		t.Fatal("normalising a non-byte dataset must fail")
	}
}

func TestLoadCIFAR10BadInput(t *testing.T) {
	good := cifarRecords(2, func(i int) byte { return byte(i) })
	badLabel := slices.Clone(good)
	badLabel[CIFARRecordSize] = 10
	cases := []struct {
		name   string
		file   string
		data   []byte // nil: delete
		errors []string
	}{
		{"missing file", "data_batch_3.bin", nil, []string{"data_batch_3.bin", "no such file"}},
		{"missing test file", cifarTestFile, nil, []string{cifarTestFile, "no such file"}},
		{"wrong record length", "data_batch_2.bin", good[:len(good)-1], []string{"data_batch_2.bin", "not a whole number of 3073-byte", "1 records and 3072 bytes over"}},
		{"python version", "data_batch_1.bin", []byte("\x80\x02}q\x00(U\x05batch"), []string{"data_batch_1.bin", "binary version"}},
		{"empty", cifarTestFile, []byte{}, []string{cifarTestFile, "empty file"}},
		{"label out of range", "data_batch_5.bin", badLabel, []string{"data_batch_5.bin", "record 1", "label 10 is out of range"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			smallCIFAR(t, dir, 2, 2)
			os.Remove(filepath.Join(dir, c.file))
			if c.data != nil {
				writeFile(t, dir, c.file, c.data)
			}
			train, test, err := LoadCIFAR10(dir, false)
			if train != nil || test != nil {
				t.Fatal("got a dataset along with the error")
			}
			wantErr(t, err, c.errors...)
		})
	}
}

// TestCIFARNotPresent: a CIFAR-10 folder without the set is a
// *NotPresentError naming the folder, so that the command line can say
// which `gtstorm data fetch` brings it, not a bare stat error.
func TestCIFARNotPresent(t *testing.T) {
	dir := t.TempDir()
	_, _, err := LoadCIFAR10(dir, false)
	var np *NotPresentError
	if !errors.As(err, &np) || np.Name != "cifar10" || np.Dir != dir {
		t.Errorf("LoadCIFAR10 on an empty folder: %v, want a *NotPresentError for cifar10 in %s", err, dir)
	}
}
