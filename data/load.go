package data

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DefaultDataDir returns the folder `gtstorm data fetch` writes to and Load
// reads from when no --data-dir is given: gtstorm/data inside the user's
// cache folder (os.UserCacheDir, e.g. ~/.cache/gtstorm/data on Linux).
func DefaultDataDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no default data folder (%v); name a data folder instead", err)
	}
	return filepath.Join(c, "gtstorm", "data"), nil
}

// orDefaultDir returns dir, or DefaultDataDir when dir is "".
func orDefaultDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return DefaultDataDir()
}

// LoadOptions tunes LoadWith.
type LoadOptions struct {
	// Features fixes the feature count of LibSVM data (an index above it is
	// an error); 0 takes the larger count of the training and test files.
	Features int
	// Normalize standardises CIFAR-10 and CIFAR-100 per channel with the
	// training set's mean and standard deviation (see NormalizeChannels).
	Normalize bool
	// CoarseLabels gives CIFAR-100 its 20 superclasses as labels instead of
	// its 100 fine classes.
	CoarseLabels bool
	// ImageSize, Channels, TestSplit and SkipBad tune --dataset images (see
	// LoadImageFolder); zero values take DefaultImageSize, 3 channels and
	// DefaultTestSplit.
	ImageSize int
	Channels  int
	TestSplit float64
	SkipBad   bool
	// Progress receives the progress of long work (decoding an image
	// folder); nil: a bar on standard error when it is a terminal.
	Progress io.Writer
}

// Load loads a built-in dataset's training and test sets by name, with
// the default LoadOptions:
//
//   - mnist: dir "" is the copy shipped in the GoMNIST module (no download);
//     otherwise dir holds the four MNIST files (see LoadMNIST).
//   - fashion-mnist: dir holds the four Fashion-MNIST IDX files, or a
//     fashion-mnist folder that does; dir "" is the data folder's copy, else
//     the Debian package's (see LoadFashionMNIST).
//   - cifar10, cifar100: dir is the data folder (DefaultDataDir if "")
//     holding cifar-10-batches-bin/ or cifar-100-binary/, or that folder.
//   - libsvm: dir is the training FILE; the test set is FILE.t when that file
//     exists, else test is nil.
//   - a9a, ijcnn1, rcv1: the files NAME and NAME.t (test, optional as for
//     libsvm) in the data folder dir (DefaultDataDir if ""), as written by
//     `gtstorm data fetch NAME`.
//
// The datasets are those of Builtin; see Registry for adding one.
func Load(name, dir string) (train, test *Dataset, err error) {
	return LoadWith(name, dir, LoadOptions{})
}

// NotPresentError is a dataset that `gtstorm data fetch` would download
// but that is not in its data folder.
type NotPresentError struct {
	Name string // the dataset
	Dir  string // the data folder looked in
	Path string // the file that is missing
}

func (e *NotPresentError) Error() string {
	return fmt.Sprintf("%s: %s does not exist", e.Name, e.Path)
}

// loadLibSVMPair loads path and, if it exists, path.t with a common feature
// count: features, or the larger of the two files' if features is 0.
func loadLibSVMPair(path string, features int) (train, test *Dataset, err error) {
	if train, err = LoadLibSVM(path, features); err != nil {
		return nil, nil, err
	}
	tp := path + ".t"
	if _, err := os.Stat(tp); errors.Is(err, os.ErrNotExist) {
		return train, nil, nil
	}
	if test, err = LoadLibSVM(tp, features); err != nil {
		return nil, nil, err
	}
	d := max(train.Shape[0], test.Shape[0])
	train.Shape, test.Shape = []int{d}, []int{d}
	return train, test, nil
}
