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
	Note    string // where it comes from, or how to get it
	Err     error  // present but not loadable
	Train   *Summary
	Test    *Summary // nil if the dataset has no test set
}

// Summary is the size and class balance of one set.
type Summary struct {
	Samples int
	Shape   []int
	Classes int
	Hist    []int // samples per class
}

// Summarize returns d's summary.
func Summarize(d *Dataset) *Summary {
	if d == nil {
		return nil
	}
	return &Summary{Samples: d.Len(), Shape: d.Shape, Classes: d.Classes, Hist: d.ClassCounts()}
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
		st := Status{Name: "mnist", Path: dir, Present: true, Note: "MNIST-format folder (use --dataset mnist --data-dir " + dir + ")"}
		st.load(func() (*Dataset, *Dataset, error) { return LoadMNIST(dir) })
		out = append(out, st)
	}

	cifar := filepath.Join(dir, CIFARDir)
	st = Status{Name: "cifar10", Path: cifar, Note: "run: gtstorm data fetch cifar10 --data-dir " + dir}
	if exists(filepath.Join(cifar, cifarTrainFiles[0])) {
		st.Present, st.Note = true, "CIFAR-10 binary version"
		st.load(func() (*Dataset, *Dataset, error) { return LoadCIFAR10(cifar, false) })
	}
	out = append(out, st)

	for _, name := range libsvmSets {
		p := filepath.Join(dir, name)
		st := Status{Name: name, Path: p, Note: "run: gtstorm data fetch " + name + " --data-dir " + dir}
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

// load fills the summaries from the loader's result, or Err.
func (s *Status) load(f func() (*Dataset, *Dataset, error)) {
	train, test, err := f()
	if err != nil {
		s.Err = err
		return
	}
	s.Train, s.Test = Summarize(train), Summarize(test)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// String describes a summary in one line: "60000 samples of 1x28x28, 10
// classes [5923 6742 ...]".
func (s *Summary) String() string {
	shape := ""
	for i, v := range s.Shape {
		if i > 0 {
			shape += "x"
		}
		shape += fmt.Sprint(v)
	}
	return fmt.Sprintf("%d samples of %s, %d classes %v", s.Samples, shape, s.Classes, s.Hist)
}
