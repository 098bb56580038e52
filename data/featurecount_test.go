package data

import (
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLibSVMInferredFeatureBound: an inferred feature count above
// MaxInferredFeatures is a *FeatureCountError naming the file, the line and
// the bound; a count given explicitly is honoured, however large, and an
// index beyond it is an error naming the file and line.
func TestLibSVMInferredFeatureBound(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name      string
		text      string
		features  int
		wantDim   int      // 0: want an error
		wantCount int      // >0: want a *FeatureCountError with these Features
		wantLine  int      // its line
		errors    []string // parts of the error message
	}{
		{"stray huge index", "1 1:1\n-1 2147483647:1\n", 0, 0, 2147483647, 2,
			[]string{"line 2", "feature index 2147483647", "10000000", "explicitly"}},
		{"just above the bound", "1 10000001:1\n", 0, 0, MaxInferredFeatures + 1, 1,
			[]string{"line 1", "10000001"}},
		{"at the bound", "1 3:1\n0 10000000:1\n", 0, MaxInferredFeatures, 0, 0, nil},
		{"explicit count above the bound", "1 1:1\n-1 2147483647:1\n", 2147483647, 2147483647, 0, 0, nil},
		{"explicit count larger than the indices", "1 1:1\n", 20_000_000, 20_000_000, 0, 0, nil},
		{"index beyond the explicit count", "1 1:1\n\n-1 2:1 12:1\n", 10, 0, 0, 0,
			[]string{"line 3", `feature "12:1"`, "index 12 beyond the 10 features"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, dir, "f"+strconv.Itoa(i), []byte(c.text))
			d, err := LoadLibSVM(p, c.features)
			if c.wantDim > 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(d.Shape, []int{c.wantDim}) {
					t.Fatalf("shape %v, want [%d]", d.Shape, c.wantDim)
				}
				return
			}
			if d != nil {
				t.Fatal("got a dataset along with the error")
			}
			wantErr(t, err, append([]string{p}, c.errors...)...)
			var fc *FeatureCountError
			switch {
			case c.wantCount == 0 && errors.As(err, &fc):
				t.Fatalf("an explicit count's error is a FeatureCountError: %v", err)
			case c.wantCount > 0 && !errors.As(err, &fc):
				t.Fatalf("error %v (%T) is not a *FeatureCountError", err, err)
			case c.wantCount > 0 && (*fc != FeatureCountError{File: p, Line: c.wantLine, Features: c.wantCount, Bound: MaxInferredFeatures}):
				t.Fatalf("error %+v, want file %s line %d features %d bound %d", *fc, p, c.wantLine, c.wantCount, MaxInferredFeatures)
			}
		})
	}
}

// TestLoadWithFeatureBound: the bound applies to the test file of a pair as
// well, and LoadOptions.Features lifts it for both files.
func TestLoadWithFeatureBound(t *testing.T) {
	dir := t.TempDir()
	train := writeFile(t, dir, "set", []byte("1 1:1\n-1 2:1\n"))
	writeFile(t, dir, "set.t", []byte("1 1:1\n-1 40000000:1\n"))
	_, _, err := LoadWith("libsvm", train, LoadOptions{})
	var fc *FeatureCountError
	if !errors.As(err, &fc) || fc.File != train+".t" || fc.Features != 40_000_000 || fc.Line != 2 {
		t.Fatalf("error %v (%+v), want a FeatureCountError for %s.t line 2", err, fc, train)
	}
	tr, te, err := LoadWith("libsvm", train, LoadOptions{Features: 40_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Dim() != 40_000_000 || te.Dim() != 40_000_000 {
		t.Fatalf("dims %d and %d, want the explicit 40000000", tr.Dim(), te.Dim())
	}
	_, _, err = LoadWith("libsvm", train, LoadOptions{Features: 30_000_000})
	wantErr(t, err, train+".t", "line 2", "beyond the 30000000 features")
}

// TestLibSVMMemoryIndependentOfIndex: parsing a sample with a huge index
// under an explicit count allocates in proportion to the input, not to the
// index or the feature count.
func TestLibSVMMemoryIndependentOfIndex(t *testing.T) {
	text := strings.Repeat("1 5:1 2147483646:0.5\n-1 2147483647:1\n", 4)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := parseLibSVM(strings.NewReader(text), 2147483647)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if d.Dim() != 2147483647 || len(d.Cols) != 12 {
		t.Fatalf("dim %d with %d stored values, want 2147483647 and 12", d.Dim(), len(d.Cols))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("parsing %d bytes allocated %d bytes", len(text), got)
	}
}

// TestFetchLibSVMFeatureBound: a published file whose count is not listed is
// refused by the same bound, with the error type kept.
func TestFetchLibSVMFeatureBound(t *testing.T) {
	_, srv := newFileServer(t, map[string][]byte{"rcv1_train.binary.bz2": []byte("1 1:1\n-1 99999999:1\n")})
	r, _ := RemoteByName("rcv1")
	r.Files[0].Rows, r.Files[0].Features = 0, 0
	dir := t.TempDir()
	err := FetchRemote(t.Context(), r, dir, FetchOptions{BaseURL: srv.URL, Client: srv.Client()})
	wantErr(t, err, "fetch rcv1", "rcv1_train.binary.bz2", "not a valid LibSVM file: line 2: feature index 99999999")
	var fc *FeatureCountError
	if !errors.As(err, &fc) || fc.Features != 99999999 {
		t.Fatalf("error %v does not carry the FeatureCountError", err)
	}
	if strings.Contains(err.Error(), filepath.Join(dir, ".fetch")) {
		t.Fatalf("error %q names the temporary file", err)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Fatalf("a failed fetch left %v", l)
	}
}
