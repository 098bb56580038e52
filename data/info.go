package data

import (
	"fmt"
	"os"
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
