package data

import (
	"context"
	"errors"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// allIDX lists the four MNIST file names, for smallMNIST's gz argument.
var allIDX = []string{MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels}

// TestLoadFashionMNIST finds the IDX files where --data-dir names them,
// in the data folder's fashion-mnist, and else in the system (Debian)
// copy, and reads labels and pixels as written.
func TestLoadFashionMNIST(t *testing.T) {
	root := t.TempDir()
	named := filepath.Join(root, "named")              // --data-dir naming the files' folder
	data := filepath.Join(root, "data")                // a data folder holding fashion-mnist/
	cache := filepath.Join(root, "cache")              // XDG_CACHE_HOME: the default data folder
	system := filepath.Join(root, "usr-share-fashion") // the Debian package's folder
	smallMNIST(t, named, 5, 2, 28, 28, allIDX...)
	smallMNIST(t, filepath.Join(data, FashionDir), 6, 2, 28, 28, allIDX...)
	smallMNIST(t, system, 7, 2, 28, 28, allIDX...)
	t.Setenv("XDG_CACHE_HOME", cache)
	reg, err := NewRegistry(fashionSpec(system))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir string
		train     int
	}{
		{"the folder of the files", named, 5},
		{"a data folder", data, 6},
		{"default: the Debian copy", "", 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			train, test, err := reg.LoadWith("fashion-mnist", c.dir, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if train.Len() != c.train || test.Len() != 2 || train.Classes != 10 || !slices.Equal(train.Shape, []int{1, 28, 28}) || train.Name != "fashion-mnist-train" {
				t.Fatalf("%s: %d+%d samples, %d classes, shape %v", train.Name, train.Len(), test.Len(), train.Classes, train.Shape)
			}
			x := make([]float32, 28*28)
			for i := range train.Len() {
				if train.Labels[i] != uint8(i%10) {
					t.Fatalf("label %d = %d", i, train.Labels[i])
				}
				train.Dense(i, x)
				for _, k := range []int{0, 27, 28, 783} {
					if want := float64(byte(i*7+k)) / 255; math.Abs(float64(x[k])-want) > 1e-7 {
						t.Fatalf("sample %d pixel %d = %v, want %v", i, k, x[k], want)
					}
				}
			}
			files, err := reg.Files("fashion-mnist", c.dir, LoadOptions{})
			if err != nil || len(files) != 4 || !filepath.IsAbs(files[0]) {
				t.Fatalf("files %v, %v", files, err)
			}
		})
	}
	// The default data folder's copy comes before the Debian one.
	smallMNIST(t, filepath.Join(cache, "gtstorm", "data", FashionDir), 8, 2, 28, 28)
	if train, _, err := reg.LoadWith("fashion-mnist", "", LoadOptions{}); err != nil || train.Len() != 8 {
		t.Fatalf("default data folder's copy: %v, %v", train, err)
	}
	// A named folder without the files is not present, whatever the system holds.
	_, _, err = reg.LoadWith("fashion-mnist", filepath.Join(root, "empty"), LoadOptions{})
	var absent *NotPresentError
	if !errors.As(err, &absent) || absent.Name != "fashion-mnist" || absent.Dir != filepath.Join(root, "empty") {
		t.Fatalf("empty folder: %v, want a NotPresentError", err)
	}
	// A damaged label file is refused naming it.
	writeFile(t, named, MNISTTrainLabels+".gz", gzipBytes(t, EncodeIDX([]int{5}, []byte{0, 1, 10, 3, 4})))
	_, _, err = reg.LoadWith("fashion-mnist", named, LoadOptions{})
	wantErr(t, err, MNISTTrainLabels, "label 10 of sample 2 is out of range [0, 10)")
	s, _ := Builtin().Spec("fashion-mnist")
	if names := s.ClassNames("", LoadOptions{}); len(names) != 10 || names[0] != "T-shirt/top" || names[9] != "Ankle boot" {
		t.Fatalf("class names %q", names)
	}
}

// TestSurveyFashionMNIST lists the data folder's copy and the Debian one.
func TestSurveyFashionMNIST(t *testing.T) {
	dir, system := t.TempDir(), t.TempDir()
	reg, err := NewRegistry(fashionSpec(system))
	if err != nil {
		t.Fatal(err)
	}
	st, err := reg.Survey(dir)
	if err != nil || len(st) != 1 || st[0].Present || !st[0].Fetchable || !strings.Contains(st[0].Note, "dataset-fashion-mnist") {
		t.Fatalf("nothing installed: %+v, %v", st, err)
	}
	smallMNIST(t, system, 3, 2, 28, 28, allIDX...)
	smallMNIST(t, filepath.Join(dir, FashionDir), 4, 1, 28, 28)
	if st, err = reg.Survey(dir); err != nil || len(st) != 2 {
		t.Fatalf("both copies: %+v, %v", st, err)
	}
	if s := st[0]; !s.Present || s.Err != nil || s.Train.Samples != 4 || s.Test.Samples != 1 || s.Path != filepath.Join(dir, FashionDir) {
		t.Fatalf("data folder's copy: %+v", s)
	}
	if s := st[1]; !s.Present || s.Err != nil || s.Train.Samples != 3 || s.Path != system || !strings.Contains(s.Note, "Debian") {
		t.Fatalf("Debian copy: %+v", s)
	}
}

// TestFetchFashionMNIST downloads four gzipped IDX files from a test
// server, checked against sizes and MD5s, into DIR/fashion-mnist.
func TestFetchFashionMNIST(t *testing.T) {
	src := t.TempDir()
	smallMNIST(t, src, 6, 3, 28, 28, allIDX...)
	files := map[string][]byte{}
	r, err := RemoteByName("fashion-mnist")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{MNISTTrainImages: 6, MNISTTrainLabels: 6, MNISTTestImages: 3, MNISTTestLabels: 3}
	for i, f := range r.Files {
		name := path.Base(f.URL)
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
		r.Files[i].Size, r.Files[i].MD5, r.Files[i].Rows = int64(len(b)), md5hex(b), rows[strings.TrimSuffix(name, ".gz")]
	}
	_, srv := newFileServer(t, files)
	opt := FetchOptions{BaseURL: srv.URL, Client: srv.Client()}
	dir := t.TempDir()
	if err := FetchRemote(context.Background(), r, dir, opt); err != nil {
		t.Fatal(err)
	}
	train, test, err := LoadWith("fashion-mnist", dir, LoadOptions{})
	if err != nil || train.Len() != 6 || test.Len() != 3 {
		t.Fatalf("fetched: %v %v %v", train, test, err)
	}
	// A label file whose count is not the published one is refused.
	r.Files[3].Rows = 4
	err = FetchRemote(context.Background(), r, t.TempDir(), FetchOptions{BaseURL: srv.URL, Client: srv.Client(), Force: true})
	wantErr(t, err, MNISTTestLabels, "holds 3 labels, the publisher lists 4")
}
