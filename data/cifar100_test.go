package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cifar100Records encodes n CIFAR-100 records: record i has coarse label
// i%20, fine label (3i)%100 and pixel k equal to byte(i*17+k*5).
func cifar100Records(n int) []byte {
	b := make([]byte, 0, n*CIFAR100RecordSize)
	for i := range n {
		b = append(b, byte(i%20), byte(3*i%100))
		for k := range 3 * 32 * 32 {
			b = append(b, byte(i*17+k*5))
		}
	}
	return b
}

// namesFile returns n label names, name0 … name(n−1), one a line, with a
// blank line at the end as the official files have.
func namesFile(prefix string, n int) []byte {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "\n")
	}
	b.WriteString("\n")
	return []byte(b.String())
}

// smallCIFAR100 writes a cifar-100-binary folder in dir: nTrain and nTest
// records, with the label-names files if names.
func smallCIFAR100(t testing.TB, dir string, nTrain, nTest int, names bool) string {
	t.Helper()
	folder := filepath.Join(dir, CIFAR100Dir)
	writeFile(t, folder, cifar100TrainFile, cifar100Records(nTrain))
	writeFile(t, folder, cifar100TestFile, cifar100Records(nTest))
	if names {
		writeFile(t, folder, cifar100FineNames, namesFile("fine-", 100))
		writeFile(t, folder, cifar100CoarseName, namesFile("coarse-", 20))
	}
	return folder
}

func TestLoadCIFAR100(t *testing.T) {
	root := t.TempDir()
	folder := smallCIFAR100(t, root, 7, 3, true)
	cases := []struct {
		name, dir string
		coarse    bool
		classes   int
		label     func(i int) uint8
	}{
		{"fine from the data folder", root, false, 100, func(i int) uint8 { return uint8(3 * i % 100) }},
		{"fine from its folder", folder, false, 100, func(i int) uint8 { return uint8(3 * i % 100) }},
		{"coarse", root, true, 20, func(i int) uint8 { return uint8(i % 20) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			train, test, err := LoadWith("cifar100", c.dir, LoadOptions{CoarseLabels: c.coarse})
			if err != nil {
				t.Fatal(err)
			}
			if train.Len() != 7 || test.Len() != 3 || train.Classes != c.classes || test.Classes != c.classes {
				t.Fatalf("%d+%d samples of %d and %d classes, want 7+3 of %d", train.Len(), test.Len(), train.Classes, test.Classes, c.classes)
			}
			if !slices.Equal(train.Shape, []int{3, 32, 32}) || train.Mean != nil {
				t.Fatalf("shape %v, mean %v", train.Shape, train.Mean)
			}
			x := make([]float32, 3072)
			for i := range 7 {
				if train.Labels[i] != c.label(i) {
					t.Fatalf("label of sample %d = %d, want %d", i, train.Labels[i], c.label(i))
				}
				train.Dense(i, x)
				for _, k := range []int{0, 1, 1023, 1024, 2047, 2048, 3071} {
					// Pixel byte b is b/255, to float32 precision.
					if want := float64(byte(i*17+k*5)) / 255; math.Abs(float64(x[k])-want) > 1e-7 {
						t.Fatalf("sample %d, feature %d (channel %d) = %v, want %v", i, k, k/1024, x[k], want)
					}
				}
			}
			names := CIFAR100ClassNames(c.dir, c.coarse)
			if len(names) != c.classes || !strings.HasPrefix(names[1], "fine-x") && !strings.HasPrefix(names[1], "coarse-x") {
				t.Fatalf("class names %q", names)
			}
		})
	}
	// Normalized, both sets take the training set's channel statistics.
	train, test, err := LoadWith("cifar100", root, LoadOptions{Normalize: true})
	if err != nil || len(train.Mean) != 3 || &train.Mean[0] != &test.Mean[0] {
		t.Fatalf("normalized: %v, mean %v", err, train.Mean)
	}
}

func TestCIFAR100Refusals(t *testing.T) {
	root := t.TempDir()
	folder := smallCIFAR100(t, root, 4, 2, false)
	if names := CIFAR100ClassNames(root, false); names != nil {
		t.Fatalf("names without a names file: %q", names)
	}
	writeFile(t, folder, cifar100FineNames, namesFile("f", 99))
	if names := CIFAR100ClassNames(root, false); names != nil {
		t.Fatalf("99 names for 100 classes: %q", names)
	}
	badFine := cifar100Records(3)
	badFine[CIFAR100RecordSize+1] = 100 // record 1's fine label
	badCoarse := cifar100Records(3)
	badCoarse[2*CIFAR100RecordSize] = 20 // record 2's coarse label
	cases := []struct {
		name  string
		train []byte
		parts []string
	}{
		{"a CIFAR-10 file", cifarRecords(3, func(int) byte { return 1 }), []string{"train.bin", "not a whole number of 3074-byte CIFAR-100 records"}},
		{"empty", nil, []string{"empty file, want 3074-byte CIFAR-100 records"}},
		{"fine label 100", badFine, []string{"record 1", "fine label 100 is out of range [0, 100)"}},
		{"coarse label 20", badCoarse, []string{"record 2", "coarse label 20 is out of range [0, 20)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, cifar100TrainFile, c.train)
			writeFile(t, dir, cifar100TestFile, cifar100Records(1))
			_, _, err := LoadWith("cifar100", dir, LoadOptions{})
			wantErr(t, err, c.parts...)
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
		})
	}
	_, _, err := LoadWith("cifar100", t.TempDir(), LoadOptions{})
	var absent *NotPresentError
	if !errors.As(err, &absent) || absent.Name != "cifar100" {
		t.Fatalf("missing CIFAR-100: %v, want a NotPresentError", err)
	}
}

// cifar100Archive returns a gzipped tar in the layout of the official
// cifar-100-binary.tar.gz.
func cifar100Archive(t *testing.T, nTrain, nTest int) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	tw := tar.NewWriter(z)
	tw.WriteHeader(&tar.Header{Name: CIFAR100Dir + "/", Typeflag: tar.TypeDir, Mode: 0o755})
	for _, m := range []struct {
		name string
		b    []byte
	}{
		{cifar100CoarseName, namesFile("c", 20)}, {cifar100FineNames, namesFile("f", 100)},
		{cifar100TestFile, cifar100Records(nTest)}, {cifar100TrainFile, cifar100Records(nTrain)},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: CIFAR100Dir + "/" + m.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m.b))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(m.b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	z.Close()
	return buf.Bytes()
}

func TestFetchCIFAR100(t *testing.T) {
	archive := cifar100Archive(t, 6, 2)
	_, srv := newFileServer(t, map[string][]byte{"cifar-100-binary.tar.gz": archive})
	opt := FetchOptions{BaseURL: srv.URL, Client: srv.Client()}
	r, err := RemoteByName("cifar100")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name           string
		size           int64
		md5            string
		rows, testRows int
		errParts       []string
	}{
		{"published count differs", int64(len(archive)), md5hex(archive), 6, 3, []string{"test.bin", "want 3 records of 3074 bytes"}},
		{"wrong MD5", int64(len(archive)), strings.Repeat("0", 32), 6, 2, []string{"MD5", "not the official file"}},
		{"good", int64(len(archive)), md5hex(archive), 6, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r.Files[0].Size, r.Files[0].MD5, r.Files[0].Rows, r.Files[0].TestRows = c.size, c.md5, c.rows, c.testRows
			err := FetchRemote(context.Background(), r, dir, opt)
			if c.errParts != nil {
				wantErr(t, err, c.errParts...)
				if left := leftovers(t, dir); len(left) != 0 {
					t.Fatalf("a failed fetch left %v", left)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			train, test, err := LoadWith("cifar100", dir, LoadOptions{CoarseLabels: true})
			if err != nil || train.Len() != 6 || test.Len() != 2 || train.Labels[5] != 5 {
				t.Fatalf("fetched CIFAR-100: %v, %v, %v", train, test, err)
			}
			if names := CIFAR100ClassNames(dir, true); len(names) != 20 {
				t.Fatalf("coarse names %q", names)
			}
		})
	}
	if orig, _ := RemoteByName("cifar100"); orig.Files[0].MD5 != "03b5dce01913d631647c71ecec9e9cb8" {
		t.Fatal("changing a fetched Remote changed the registry's")
	}
}
