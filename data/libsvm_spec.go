package data

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The registry entries of LibSVM data: any LibSVM file (libsvm) and the
// sets `gtstorm data fetch` downloads into the data folder (a9a, ijcnn1,
// rcv1), each as NAME (training) and, when published, NAME.t (test).

// libsvmScanBudget bounds the bytes of a LibSVM file read to count its
// samples and values for Sizes; a longer file's counts are extrapolated.
const libsvmScanBudget = 256 << 20

// libsvmFileSpec is a LibSVM training file named by --data-dir.
func libsvmFileSpec() Spec {
	return Spec{
		Name: "libsvm", LogReg: true, Model: "logreg",
		Load: func(dir string, opt LoadOptions) (*Dataset, *Dataset, error) {
			if dir == "" {
				return nil, nil, errors.New("libsvm: no file given (want a LibSVM training file)")
			}
			return loadLibSVMPair(dir, opt.Features)
		},
		Files: func(dir string, _ LoadOptions) ([]string, error) { return []string{dir, dir + ".t"}, nil },
		Sizes: func(dir string, opt LoadOptions) Sizes { return libsvmSizes(dir, opt.Features) },
	}
}

// libsvmSetSpec is the LibSVM set name in the data folder, downloaded by
// `gtstorm data fetch name`.
func libsvmSetSpec(name string) Spec {
	path := func(dir string) (string, error) {
		d, err := orDefaultDir(dir)
		return filepath.Join(d, name), err
	}
	remote, ok := libsvmRemote(name)
	if !ok {
		panic("no download of LibSVM set " + name)
	}
	return Spec{
		Name: name, LogReg: true, Model: "logreg", Remote: &remote,
		Load: func(dir string, opt LoadOptions) (*Dataset, *Dataset, error) {
			p, err := path(dir)
			if err != nil {
				return nil, nil, err
			}
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				return nil, nil, &NotPresentError{Name: name, Dir: filepath.Dir(p), Path: p}
			}
			return loadLibSVMPair(p, opt.Features)
		},
		Files: func(dir string, _ LoadOptions) ([]string, error) {
			p, err := path(dir)
			return []string{p, p + ".t"}, err
		},
		Sizes: func(dir string, opt LoadOptions) Sizes {
			p, _ := path(dir)
			return libsvmSizes(p, opt.Features)
		},
		Survey: func(dir string) []Status { return []Status{surveyLibSVM(name, dir)} },
	}
}

// surveyLibSVM reports the LibSVM set name in the data folder dir.
func surveyLibSVM(name, dir string) Status {
	p := filepath.Join(dir, name)
	if !exists(p) {
		return Status{Name: name, Path: p, DataDir: dir, Fetchable: true, Note: "not downloaded"}
	}
	note := "LibSVM, no test set (" + p + ".t absent)"
	if exists(p + ".t") {
		note = "LibSVM, test set " + p + ".t"
	}
	return statusOf(name, p, dir, note, true, func() (*Dataset, *Dataset, error) { return loadLibSVMPair(p, 0) })
}

// libsvmSizes scans the LibSVM file path and path.t (their first 256 MiB,
// the rest extrapolated; a missing file counts 0). features fixes the
// feature count; 0 takes the largest index.
func libsvmSizes(path string, features int) Sizes {
	tr, _ := ScanLibSVM(path, libsvmScanBudget)
	te, _ := ScanLibSVM(path+".t", libsvmScanBudget)
	if features == 0 {
		features = int(max(tr.MaxIndex, te.MaxIndex))
	}
	s := Sizes{Train: int(tr.Samples), Test: int(te.Samples), Shape: []int{features}, Classes: 2}
	// CSR rows: a column index and a value per non-zero, a row pointer and a
	// label per sample, in slices grown by append (a tenth of slack on
	// average); while loading, the last growth holds old and new arrays.
	for _, c := range []LibSVMCounts{tr, te} {
		s.Bytes += int64(float64(c.NonZeros*8+c.Samples*9) * 1.1)
	}
	s.Load = s.Bytes
	approx := ""
	if tr.Approx || te.Approx {
		approx = "about "
	}
	s.Detail = fmt.Sprintf("%s%d + %d samples, %d non-zeros, %d features", approx, tr.Samples, te.Samples, tr.NonZeros+te.NonZeros, features)
	return s
}
