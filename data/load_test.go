package data

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadByName(t *testing.T) {
	dir := t.TempDir()
	small, err := os.ReadFile(filepath.Join("testdata", "small.libsvm"))
	if err != nil {
		t.Fatal(err)
	}
	alone := writeFile(t, dir, "alone.libsvm", small)
	train, test, err := Load("libsvm", alone)
	if err != nil || train.Len() != 6 || test != nil {
		t.Fatalf("libsvm without .t: %v, %v, %v; want 6 samples and no test set", train, test, err)
	}
	// The test file has more features than the training file: both get the larger count.
	writeFile(t, dir, "alone.libsvm.t", []byte("1 9:1\n"))
	train, test, err = Load("libsvm", alone)
	if err != nil || train.Shape[0] != 9 || test.Shape[0] != 9 {
		t.Fatalf("libsvm with .t: %v %v %v", train, test, err)
	}
	writeFile(t, dir, "ijcnn1", small)
	if train, _, err = Load("ijcnn1", dir); err != nil || train.Len() != 6 {
		t.Fatalf("ijcnn1 from the data folder: %v %v", train, err)
	}

	cases := []struct {
		name, dir string
		errors    []string
	}{
		{"imagenet", dir, []string{`unknown dataset "imagenet"`, "mnist"}},
		{"libsvm", "", []string{"no file given"}},
		{"libsvm", filepath.Join(dir, "none"), []string{filepath.Join(dir, "none"), "no such file"}},
		{"a9a", dir, []string{filepath.Join(dir, "a9a"), "does not exist"}},
		{"cifar10", dir, []string{"data_batch_1.bin", "does not exist"}},
		{"mnist", dir, []string{MNISTTrainImages, "no such file"}},
	}
	for _, c := range cases {
		train, test, err := Load(c.name, c.dir)
		if train != nil || test != nil {
			t.Fatalf("Load(%q, %q) returned data with the error", c.name, c.dir)
		}
		wantErr(t, err, c.errors...)
	}
	if def, err := DefaultDataDir(); err == nil && !strings.HasSuffix(def, filepath.Join("gtstorm", "data")) {
		t.Fatalf("DefaultDataDir = %s", def)
	}
}

func TestSurvey(t *testing.T) {
	if raceEnabled {
		t.Skip("the survey loads the 60,000 MNIST images of the module cache in full on one goroutine: slow under -race, which finds nothing there; the plain go test ./... runs it")
	}
	dir := t.TempDir()
	smallCIFAR(t, filepath.Join(dir, CIFARDir), 2, 3)
	writeFile(t, dir, "a9a", []byte("1 1:1\n-1 2:1\n-1 3:1\n"))
	writeFile(t, dir, "a9a.t", []byte("1 1:1\n"))
	writeFile(t, dir, "rcv1", []byte("1 1:1\n2 2:1\n"))
	smallMNIST(t, dir, 4, 2, 2, 2)
	st, err := Survey(dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]Status{}
	for _, s := range st {
		byName[s.Name] = append(byName[s.Name], s)
	}
	check := func(name string, k int, present bool, train, test int, errPart string) {
		t.Helper()
		s := byName[name][k]
		if s.Present != present {
			t.Fatalf("%s: present %v, want %v", name, s.Present, present)
		}
		if errPart != "" {
			wantErr(t, s.Err, errPart)
			return
		}
		if s.Err != nil {
			t.Fatalf("%s: %v", name, s.Err)
		}
		if (s.Train == nil) != (train == 0) || (s.Train != nil && s.Train.Samples != train) {
			t.Fatalf("%s: train %v, want %d samples", name, s.Train, train)
		}
		if (s.Test == nil) != (test == 0) || (s.Test != nil && s.Test.Samples != test) {
			t.Fatalf("%s: test %v, want %d samples", name, s.Test, test)
		}
	}
	check("mnist", 0, true, 60000, 10000, "")
	check("mnist", 1, true, 4, 2, "")
	check("cifar10", 0, true, 10, 3, "")
	check("a9a", 0, true, 3, 1, "")
	check("ijcnn1", 0, false, 0, 0, "")
	check("rcv1", 0, true, 0, 0, "line 2")
	if h := byName["mnist"][0].Train.Hist; !slices.Equal(h, mnistTrainCounts) {
		t.Fatalf("mnist histogram %v", h)
	}
	if s := byName["ijcnn1"][0]; s.Present || !s.Fetchable || s.DataDir != dir {
		t.Fatalf("missing ijcnn1: %+v, want absent, fetchable into %s", s, dir)
	}
	if got := byName["mnist"][0].Train.String(); !strings.HasPrefix(got, "60000 samples of 1x28x28, 10 classes [5923 ") {
		t.Fatalf("summary %q", got)
	}
}
