package data

import (
	"fmt"
	"os"
	"path/filepath"
)

// Status describes one dataset for `gtstorm data info`: where it is or would
// be, and, when present, what it holds.
type Status struct {
	Name    string // the name Load takes
	Path    string // where the files are (or would be)
	Present bool
	Note    string // where it comes from
	DataDir string // the data folder surveyed
	// Fetchable says that `data fetch` downloads it into DataDir.
	Fetchable bool
	Err       error // present but not loadable
	Train     *SetInfo
	Test      *SetInfo // nil if the dataset has no test set
}

// SetInfo is the size and class balance of one set (a training or a test
// set), as [Dataset.Info] reports it.
type SetInfo struct {
	Samples int
	Shape   []int
	Classes int
	Hist    []int // samples per class
}

// Info returns d's size, sample shape and class counts; nil for a nil d (a
// dataset without a test set, say).
func (d *Dataset) Info() *SetInfo {
	if d == nil {
		return nil
	}
	return &SetInfo{Samples: d.Len(), Shape: d.Shape, Classes: d.Classes, Hist: d.ClassCounts()}
}

// Survey reports every dataset Load knows: MNIST from the GoMNIST module,
// an MNIST-format folder if dir is one, and CIFAR-10 and the LibSVM sets in
// the data folder dir (DefaultDataDir if ""). Present datasets are loaded in
// full, so counts are those training would see.
func Survey(dir string) ([]Status, error) {
	if dir == "" {
		var err error
		if dir, err = DefaultDataDir(); err != nil {
			return nil, err
		}
	}
	var out []Status
	st := Status{Name: "mnist", Note: "shipped in the Go module " + MNISTModule + ", no download needed"}
	if p, err := MNISTDir(); err != nil {
		st.Err = err
	} else {
		st.Path, st.Present = p, true
		st.load(func() (*Dataset, *Dataset, error) { return LoadMNIST(p) })
	}
	out = append(out, st)

	if hasMNIST(dir) {
		st := Status{Name: "mnist", Path: dir, DataDir: dir, Present: true, Note: "MNIST-format folder"}
		st.load(func() (*Dataset, *Dataset, error) { return LoadMNIST(dir) })
		out = append(out, st)
	}

	cifar := filepath.Join(dir, CIFARDir)
	st = Status{Name: "cifar10", Path: cifar, DataDir: dir, Fetchable: true, Note: "not downloaded"}
	if exists(filepath.Join(cifar, cifarTrainFiles[0])) {
		st.Present, st.Note = true, "CIFAR-10 binary version"
		st.load(func() (*Dataset, *Dataset, error) { return LoadCIFAR10(cifar, false) })
	}
	out = append(out, st)

	for _, name := range libsvmSets {
		p := filepath.Join(dir, name)
		st := Status{Name: name, Path: p, DataDir: dir, Fetchable: true, Note: "not downloaded"}
		if exists(p) {
			st.Present, st.Note = true, "LibSVM"
			if exists(p + ".t") {
				st.Note += ", test set " + p + ".t"
			} else {
				st.Note += ", no test set (" + p + ".t absent)"
			}
			st.load(func() (*Dataset, *Dataset, error) { return loadLibSVMPair(p, 0) })
		}
		out = append(out, st)
	}
	return out, nil
}

// load fills Train and Test from the loader's result, or Err.
func (s *Status) load(f func() (*Dataset, *Dataset, error)) {
	train, test, err := f()
	if err != nil {
		s.Err = err
		return
	}
	s.Train, s.Test = train.Info(), test.Info()
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// String describes the set in one line: "60000 samples of 1x28x28, 10
// classes [5923 6742 ...]".
func (s *SetInfo) String() string {
	shape := ""
	for i, v := range s.Shape {
		if i > 0 {
			shape += "x"
		}
		shape += fmt.Sprint(v)
	}
	return fmt.Sprintf("%d samples of %s, %d classes %v", s.Samples, shape, s.Classes, s.Hist)
}
