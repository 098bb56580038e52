package data

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gzipBytes compresses b.
func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	z := gzip.NewWriter(&out)
	if _, err := z.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// writeFile writes b to dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// smallMNIST writes an MNIST-format folder with nTrain and nTest images of
// rows×cols; pixel k of image i is byte(i*7+k) and label i is i%10. Files
// whose name is in gz are gzip-compressed (name.gz).
func smallMNIST(t testing.TB, dir string, nTrain, nTest, rows, cols int, gz ...string) {
	t.Helper()
	write := func(name string, dims []int, payload []byte) {
		b := EncodeIDX(dims, payload)
		for _, g := range gz {
			if g == name {
				writeFile(t, dir, name+".gz", gzipBytes(t, b))
				return
			}
		}
		writeFile(t, dir, name, b)
	}
	for _, set := range []struct {
		images, labels string
		n              int
	}{{MNISTTrainImages, MNISTTrainLabels, nTrain}, {MNISTTestImages, MNISTTestLabels, nTest}} {
		pix := make([]byte, set.n*rows*cols)
		for i := range set.n {
			for k := range rows * cols {
				pix[i*rows*cols+k] = byte(i*7 + k)
			}
		}
		lab := make([]byte, set.n)
		for i := range lab {
			lab[i] = byte(i % 10)
		}
		write(set.images, []int{set.n, rows, cols}, pix)
		write(set.labels, []int{set.n}, lab)
	}
}

// cifarRecords encodes n CIFAR-10 records: record i has label labelOf(i) and
// pixel k equal to byte(i*31+k*3).
func cifarRecords(n int, labelOf func(i int) byte) []byte {
	b := make([]byte, 0, n*CIFARRecordSize)
	for i := range n {
		b = append(b, labelOf(i))
		for k := range cifarPixels {
			b = append(b, byte(i*31+k*3))
		}
	}
	return b
}

// smallCIFAR writes a CIFAR-10 binary folder: nPer records in each training
// file and nTest in the test file; record i of file f has label (i+f)%10.
func smallCIFAR(t testing.TB, dir string, nPer, nTest int) {
	t.Helper()
	for f, name := range cifarTrainFiles {
		writeFile(t, dir, name, cifarRecords(nPer, func(i int) byte { return byte((i + f) % 10) }))
	}
	writeFile(t, dir, cifarTestFile, cifarRecords(nTest, func(i int) byte { return byte(i % 10) }))
}

// labelsOnly returns a dataset with the given labels and no features, enough
// for partitions and samplers.
func labelsOnly(classes int, labels []uint8) *Dataset {
	return &Dataset{Name: "labels", Shape: []int{1}, Classes: classes, Labels: labels, Floats: make([]float32, len(labels))}
}

// wantErr fails unless err is non-nil and its message holds every part.
func wantErr(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}

// sharedDir returns the repository's testdata folder, which holds the
// LibSVM files (libsvm/a8a, a8a.t) the tests read; it fails the test if the
// folder is missing.
func sharedDir(t testing.TB) string {
	t.Helper()
	p := filepath.Join("..", "testdata")
	if _, err := os.Stat(filepath.Join(p, "libsvm", "a8a")); err != nil {
		t.Fatalf("testdata/libsvm/a8a, the LibSVM file the tests read, is missing: %v", err)
	}
	return p
}
