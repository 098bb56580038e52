package data

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Fashion-MNIST (Xiao, Rasul and Vollgraf 2017, Zalando Research): 28×28
// grayscale images of 10 kinds of clothing in MNIST's IDX files, under
// MNIST's file names.
const (
	// FashionDir is the folder of the data folder that `gtstorm data fetch
	// fashion-mnist` writes the four files to.
	FashionDir = "fashion-mnist"
	// DebianFashionDir is where Debian's dataset-fashion-mnist package
	// installs the four .gz files.
	DebianFashionDir = "/usr/share/datasets/fashion-mnist"
	// FashionBaseURL is Zalando's bucket, over HTTPS, whose website address
	// (http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/) the
	// dataset's README links.
	FashionBaseURL = "https://fashion-mnist.s3.eu-central-1.amazonaws.com/"
)

// fashionNames are the Fashion-MNIST class names by label, as Zalando
// publishes them.
var fashionNames = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// LoadFashionMNIST loads Fashion-MNIST from dir, a folder holding the four
// IDX files (plain or .gz) or a fashion-mnist folder that does. With dir
// "" it reads the data folder's fashion-mnist (DefaultDataDir), else the
// copy of Debian's dataset-fashion-mnist package (DebianFashionDir).
// Absent data is a *NotPresentError.
func LoadFashionMNIST(dir string) (train, test *Dataset, err error) {
	return loadFashion(dir, DebianFashionDir)
}

// loadFashion is LoadFashionMNIST with the system copy looked for in
// system ("" for none).
func loadFashion(dir, system string) (train, test *Dataset, err error) {
	if dir, err = fashionFolder(dir, system); err != nil {
		return nil, nil, err
	}
	if train, err = loadIDXPair(dir, MNISTTrainImages, MNISTTrainLabels, "fashion-mnist-train"); err != nil {
		return nil, nil, err
	}
	if test, err = loadIDXPair(dir, MNISTTestImages, MNISTTestLabels, "fashion-mnist-test"); err != nil {
		return nil, nil, err
	}
	if !slices.Equal(train.Shape, test.Shape) {
		return nil, nil, fmt.Errorf("fashion-mnist %s: training images are of shape %v but test images of %v", dir, train.Shape, test.Shape)
	}
	return train, test, nil
}

// fashionFolder returns the folder holding the Fashion-MNIST files for
// --data-dir dir: dir or dir/fashion-mnist, whichever holds the training
// images; for dir "", the data folder's fashion-mnist, else system.
func fashionFolder(dir, system string) (string, error) {
	has := func(d string) bool { _, err := findMNISTFile(d, MNISTTrainImages); return d != "" && err == nil }
	where := dir
	if dir == "" {
		def, err := DefaultDataDir()
		if err != nil {
			return "", err
		}
		where = def
	} else if has(dir) {
		return dir, nil
	}
	sub := filepath.Join(where, FashionDir)
	switch {
	case has(sub):
		return sub, nil
	case dir == "" && has(system):
		return system, nil
	}
	return "", &NotPresentError{Name: "fashion-mnist", Dir: where, Path: filepath.Join(sub, MNISTTrainImages+".gz")}
}

// fashionSpec is Fashion-MNIST, with the system copy looked for in system
// (DebianFashionDir for the built-in entry).
func fashionSpec(system string) Spec {
	return Spec{
		Name:  "fashion-mnist",
		Model: "mnist-cnn",
		Load: func(dir string, _ LoadOptions) (*Dataset, *Dataset, error) {
			return loadFashion(dir, system)
		},
		Files: func(dir string, _ LoadOptions) ([]string, error) {
			d, err := fashionFolder(dir, system)
			if err != nil {
				return nil, nil // nothing to fingerprint; the load reports it
			}
			return idxFiles(d), nil
		},
		Sizes:      func(string, LoadOptions) Sizes { return idxSizes("Fashion-MNIST") },
		Survey:     func(dir string) []Status { return surveyFashion(dir, system) },
		ClassNames: func(string, LoadOptions) []string { return slices.Clone(fashionNames) },
		Remote:     fashionRemote(),
	}
}

// surveyFashion reports the data folder's copy of Fashion-MNIST and, when
// installed, the Debian package's.
func surveyFashion(dir, system string) []Status {
	load := func(d string) func() (*Dataset, *Dataset, error) {
		return func() (*Dataset, *Dataset, error) { return loadFashion(d, "") }
	}
	sub := filepath.Join(dir, FashionDir)
	var out []Status
	if exists(filepath.Join(sub, MNISTTrainImages+".gz")) || exists(filepath.Join(sub, MNISTTrainImages)) {
		out = append(out, statusOf("fashion-mnist", sub, dir, "Fashion-MNIST (Zalando), IDX files", true, load(sub)))
	}
	if system != "" && hasMNIST(system) {
		note := "Debian package dataset-fashion-mnist; used without --data-dir when the data folder has no copy"
		out = append(out, statusOf("fashion-mnist", system, "", note, false, load(system)))
	}
	if len(out) == 0 {
		out = append(out, Status{Name: "fashion-mnist", Path: sub, DataDir: dir, Fetchable: true,
			Note: "not downloaded (or install Debian's dataset-fashion-mnist package)"})
	}
	return out
}

// fashionRemote is the download of Fashion-MNIST: Zalando's four gzipped
// IDX files, checked against the sizes and MD5s of the dataset's README
// and then parsed in full.
func fashionRemote() *Remote {
	file := func(name string, size int64, md5 string, rows int) RemoteFile {
		return RemoteFile{URL: FashionBaseURL + name + ".gz", Size: size, MD5: md5, Dest: path.Join(FashionDir, name+".gz"), Rows: rows}
	}
	return &Remote{
		Name: "fashion-mnist", Format: "idx", Unpack: unpackIDX,
		Files: []RemoteFile{
			file(MNISTTrainImages, 26421880, "8d4fb7e6c68d591d4c3dfef9ec88bf0d", 60000),
			file(MNISTTrainLabels, 29515, "25c81989df183df01b3e8a0aad5dffbe", 60000),
			file(MNISTTestImages, 4422102, "bef4ecab320f06d8554ea6380940ec79", 10000),
			file(MNISTTestLabels, 5148, "bb300cfdad3c16e7a12a480ee83cd310", 10000),
		},
		Note: "Fashion-MNIST (Zalando Research), four gzipped IDX files (30 MB), checked against the sizes and MD5s published at https://github.com/zalandoresearch/fashion-mnist",
	}
}

// unpackIDX moves the downloaded IDX file (gzipped or not) to out as it is
// and parses it in full: an image file (idx3 in its name) must hold f.Rows
// images, a label file (idx1) f.Rows labels below 10.
func unpackIDX(dl, out string, f RemoteFile) error {
	ndim := 3
	if strings.Contains(path.Base(f.URL), "-idx1-") {
		ndim = 1
	}
	if err := os.Rename(dl, out); err != nil {
		return err
	}
	dims, payload, err := readIDXFile(out, ndim)
	if err != nil {
		return fmt.Errorf("not a valid IDX file: %w", unwrapLoad(err))
	}
	if f.Rows > 0 && dims[0] != f.Rows {
		return fmt.Errorf("holds %s, the publisher lists %d", describeIDX(dims), f.Rows)
	}
	if ndim == 1 {
		return checkLabels(payload, mnistClasses)
	}
	return nil
}

// unwrapLoad drops the "load TEMPORARY-FILE: " prefix of a loader's error;
// the caller names the URL.
func unwrapLoad(err error) error {
	type wrapper interface{ Unwrap() error }
	if w, ok := err.(wrapper); ok && w.Unwrap() != nil {
		return w.Unwrap()
	}
	return err
}
