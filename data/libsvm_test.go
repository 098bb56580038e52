package data

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadLibSVMRealA8A(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "libsvm")
	train, test, err := Load("libsvm", filepath.Join(dir, "a8a"))
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 22696 || test == nil || test.Len() != 9865 {
		t.Fatalf("a8a: %d training samples and test %v; want 22696 and 9865", train.Len(), test)
	}
	if !slices.Equal(train.Shape, []int{123}) || !slices.Equal(test.Shape, []int{123}) || train.Classes != 2 {
		t.Fatalf("shapes %v %v classes %d, want [123] and 2", train.Shape, test.Shape, train.Classes)
	}
	if !train.IsSparse() {
		t.Fatal("LibSVM data must be stored sparse")
	}
	// The first line of a8a: -1 3:1 11:1 14:1 19:1 39:1 42:1 55:1 64:1 67:1 73:1 75:1 76:1 80:1 83:1
	cols, vals := train.Sparse(0)
	wantCols := []int32{2, 10, 13, 18, 38, 41, 54, 63, 66, 72, 74, 75, 79, 82}
	if train.Labels[0] != 0 || !slices.Equal(cols, wantCols) || slices.ContainsFunc(vals, func(v float32) bool { return v != 1 }) {
		t.Fatalf("row 0: label %d cols %v vals %v", train.Labels[0], cols, vals)
	}
	// Every UCI Adult row has exactly 14 one-hot features set... except rows
	// with missing values, which have fewer; none has more.
	counts := train.ClassCounts()
	if counts[0]+counts[1] != 22696 || counts[1] == 0 || counts[0] < counts[1] {
		t.Fatalf("class counts %v", counts)
	}
	for i := range train.Len() {
		if c, _ := train.Sparse(i); len(c) > 14 || len(c) == 0 {
			t.Fatalf("row %d has %d features, want 1 to 14", i, len(c))
		}
	}
}

func TestLoadLibSVMSmall(t *testing.T) {
	plain, err := LoadLibSVM(filepath.Join("testdata", "small.libsvm"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Len() != 6 || !slices.Equal(plain.Shape, []int{5}) {
		t.Fatalf("%d samples of %v, want 6 of [5]", plain.Len(), plain.Shape)
	}
	if !slices.Equal(plain.Labels, []uint8{1, 0, 1, 0, 0, 1}) {
		t.Fatalf("labels %v", plain.Labels)
	}
	if !slices.Equal(plain.RowPtr, []int{0, 3, 4, 9, 10, 10, 11}) {
		t.Fatalf("row pointers %v", plain.RowPtr)
	}
	x := make([]float32, 5)
	plain.Dense(0, x)
	if !slices.Equal(x, []float32{0.5, 0, 1, 0, -2}) {
		t.Fatalf("row 0 dense %v", x)
	}
	plain.Dense(3, x)
	if !slices.Equal(x, []float32{0, 0, 0, 0.3, 0}) {
		t.Fatalf("row 3 dense %v", x)
	}
	bz, err := LoadLibSVM(filepath.Join("testdata", "small.libsvm.bz2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "small.gz")
	raw, _ := os.ReadFile(filepath.Join("testdata", "small.libsvm"))
	writeFile(t, filepath.Dir(gz), "small.gz", gzipBytes(t, raw))
	gzd, err := LoadLibSVM(gz, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Dataset{bz, gzd} {
		if !slices.Equal(d.Labels, plain.Labels) || !slices.Equal(d.Cols, plain.Cols) || !slices.Equal(d.Vals, plain.Vals) || !slices.Equal(d.RowPtr, plain.RowPtr) {
			t.Fatalf("%s differs from the plain file", d.Name)
		}
	}
	wide, err := LoadLibSVM(filepath.Join("testdata", "small.libsvm"), 50)
	if err != nil || !slices.Equal(wide.Shape, []int{50}) {
		t.Fatalf("features 50: shape %v err %v", wide.Shape, err)
	}
}

func TestParseLibSVMForms(t *testing.T) {
	cases := []struct {
		text   string
		labels []uint8
		cols   []int32
	}{
		{"0 1:1\n1 2:1\n", []uint8{0, 1}, []int32{0, 1}},
		{"+1.0 1:1\r\n-1.0\t3:2\r\n", []uint8{1, 0}, []int32{0, 2}},
		{"\n\n  # only a comment\n1 4:1e3\n\n", []uint8{1}, []int32{3}},
		{"-1 2:0", []uint8{0}, []int32{1}}, // no final newline, explicit zero kept
	}
	for _, c := range cases {
		d, err := parseLibSVM(strings.NewReader(c.text), 0)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if !slices.Equal(d.Labels, c.labels) || !slices.Equal(d.Cols, c.cols) {
			t.Fatalf("%q: labels %v cols %v, want %v %v", c.text, d.Labels, d.Cols, c.labels, c.cols)
		}
	}
}

func TestLoadLibSVMBadInput(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		features int
		errors   []string
	}{
		{"label out of range", "1 1:1\n2 1:1\n", 0, []string{"line 2", `label "2" is out of range`}},
		{"label not a number", "1 1:1\n\nyes 1:1\n", 0, []string{"line 3", `label "yes" is not a number`}},
		{"no colon", "1 1:1 5\n", 0, []string{"line 1", `feature "5"`, "index:value"}},
		{"index 0", "-1 0:1 2:1\n", 0, []string{"line 1", `feature "0:1"`, "index is not an integer from 1"}},
		{"negative index", "-1 -3:1\n", 0, []string{"line 1", "index is not an integer"}},
		{"decreasing", "1 1:1\n-1 4:1 2:1\n", 0, []string{"line 2", "index 2 after 4", "increasing"}},
		{"repeated", "1 3:1 3:2\n", 0, []string{"line 1", "index 3 after 3"}},
		{"beyond features", "1 1:1\n1 9:1\n", 5, []string{"line 2", "index 9 beyond the 5 features"}},
		{"bad value", "1 1:x\n", 0, []string{"line 1", `feature "1:x"`, "not a finite number"}},
		{"nan value", "1 1:NaN\n", 0, []string{"line 1", "not a finite number"}},
		{"inf value", "1 1:1e99\n", 0, []string{"line 1", "not a finite number"}},
		{"huge index", "1 99999999999:1\n", 0, []string{"line 1", "index is not an integer"}},
		{"empty", "", 0, []string{"no samples"}},
		{"comments only", "# nothing\n\n", 0, []string{"no samples"}},
		{"qid", "1 qid:3 1:1\n", 0, []string{"line 1", `feature "qid:3"`}},
		{"negative feature count", "1 1:1\n", -1, []string{"feature count -1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "bad.libsvm", []byte(c.text))
			d, err := LoadLibSVM(p, c.features)
			if d != nil {
				t.Fatal("got a dataset along with the error")
			}
			wantErr(t, err, append([]string{p}, c.errors...)...)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "nope")
		_, err := LoadLibSVM(p, 0)
		wantErr(t, err, p, "no such file")
	})
	t.Run("truncated bz2", func(t *testing.T) {
		raw, _ := os.ReadFile(filepath.Join("testdata", "small.libsvm.bz2"))
		p := writeFile(t, t.TempDir(), "cut.bz2", raw[:len(raw)/2])
		_, err := LoadLibSVM(p, 0)
		wantErr(t, err, p)
	})
	t.Run("truncated gz", func(t *testing.T) {
		raw, _ := os.ReadFile(filepath.Join("testdata", "small.libsvm"))
		gz := gzipBytes(t, raw)
		p := writeFile(t, t.TempDir(), "cut.gz", gz[:len(gz)-6])
		_, err := LoadLibSVM(p, 0)
		wantErr(t, err, p, "truncated")
	})
	t.Run("line too long", func(t *testing.T) {
		p := writeFile(t, t.TempDir(), "long", []byte("1 1:1\n1 "+strings.Repeat("1", maxLibSVMLine)+"\n"))
		_, err := LoadLibSVM(p, 0)
		wantErr(t, err, p, "line 2", "longer than")
	})
}

// TestScanLibSVM counts samples, non-zeros and features, plain and gzip,
// and through comments and blank lines.
func TestScanLibSVM(t *testing.T) {
	dir := t.TempDir()
	text := "# a comment 99:1\n+1 1:0.5 7:1 12:2e-3\n\n-1 3:1 # 400:1\n0 2:1 10:1\n+1\n"
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte(text), 0o644)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(text))
	zw.Close()
	gz := filepath.Join(dir, "gz")
	os.WriteFile(gz, zb.Bytes(), 0o644)
	for _, path := range []string{plain, gz} {
		s, err := ScanLibSVM(path, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if s.Samples != 4 || s.NonZeros != 6 || s.MaxIndex != 12 || s.Approx {
			t.Errorf("%s: %+v, want 4 rows, 6 non-zeros, 12 features", filepath.Base(path), s)
		}
	}
	if _, err := ScanLibSVM(filepath.Join(dir, "missing"), 1<<20); err == nil {
		t.Error("a missing file scanned without error")
	}
}

// TestScanLibSVMExtrapolates: past its budget the scan scales its counts
// by the share of the file it read.
func TestScanLibSVMExtrapolates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long")
	line := "+1 1:0.5 7:1 12:2e-3\n"
	os.WriteFile(path, []byte(strings.Repeat(line, 200000)), 0o644) // 4.2 MB
	s, err := ScanLibSVM(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Approx || s.Samples < 199000 || s.Samples > 201000 || s.NonZeros < 3*199000 || s.NonZeros > 3*201000 || s.MaxIndex != 12 {
		t.Errorf("%+v, want about 200000 samples and 600000 non-zeros, approximate", s)
	}
}
