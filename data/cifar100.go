package data

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// CIFAR-100 binary version: train.bin (50,000 records) and test.bin
// (10,000) in the folder cifar-100-binary, each record a coarse label
// (0..19), a fine label (0..99) and the 32×32 red, green and blue planes;
// fine_label_names.txt and coarse_label_names.txt name the labels, one a
// line.
const (
	CIFAR100Dir        = "cifar-100-binary" // folder name inside the official archive
	CIFAR100RecordSize = 2 + cifarPixels    // 3074 bytes
	cifar100TrainFile  = "train.bin"
	cifar100TestFile   = "test.bin"
	cifar100Fine       = 100
	cifar100Coarse     = 20
	cifar100FineNames  = "fine_label_names.txt"
	cifar100CoarseName = "coarse_label_names.txt"
	// maxNamesFile bounds a label-names file (the official ones are about
	// 1 KB).
	maxNamesFile = 64 << 10
)

// cifar100Format is CIFAR-100's layout, its fine labels or, with coarse,
// its superclasses as the labels; both header bytes are range-checked.
func cifar100Format(coarse bool) cifarFormat {
	f := cifarFormat{what: "CIFAR-100", header: 2, label: 1, classes: cifar100Fine, bounds: []int{cifar100Coarse, cifar100Fine}}
	if coarse {
		f.label, f.classes = 0, cifar100Coarse
	}
	return f
}

// LoadCIFAR100 loads the binary version of CIFAR-100 from dir, the folder
// holding train.bin and test.bin (or its parent, when that holds a
// cifar-100-binary folder). Labels are the 100 fine classes, or with
// opt.CoarseLabels the 20 superclasses. Samples have Shape [3 32 32],
// channel first; with opt.Normalize both sets are standardised per channel
// with the training set's mean and standard deviation.
func LoadCIFAR100(dir string, opt LoadOptions) (train, test *Dataset, err error) {
	root := dir
	dir = cifar100Folder(dir)
	trainPath := filepath.Join(dir, cifar100TrainFile)
	if _, err := os.Stat(trainPath); errors.Is(err, os.ErrNotExist) {
		return nil, nil, &NotPresentError{Name: "cifar100", Dir: root, Path: trainPath}
	}
	f, name := cifar100Format(opt.CoarseLabels), "cifar100"
	if opt.CoarseLabels {
		name += "-coarse"
	}
	if train, err = loadCIFARFiles([]string{trainPath}, name+"-train", f); err != nil {
		return nil, nil, err
	}
	if test, err = loadCIFARFiles([]string{filepath.Join(dir, cifar100TestFile)}, name+"-test", f); err != nil {
		return nil, nil, err
	}
	if opt.Normalize {
		if err := NormalizeChannels(train, test); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}

// cifar100Folder returns dir/cifar-100-binary when dir itself holds no
// train.bin but that subfolder exists, else dir.
func cifar100Folder(dir string) string {
	if exists(filepath.Join(dir, cifar100TrainFile)) {
		return dir
	}
	sub := filepath.Join(dir, CIFAR100Dir)
	if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
		return sub
	}
	return dir
}

// cifar100NamesFile returns the label-names file of the fine or coarse
// labels in the CIFAR-100 folder of dir.
func cifar100NamesFile(dir string, coarse bool) string {
	if coarse {
		return filepath.Join(cifar100Folder(dir), cifar100CoarseName)
	}
	return filepath.Join(cifar100Folder(dir), cifar100FineNames)
}

// CIFAR100ClassNames returns the names of CIFAR-100's fine labels (coarse:
// its superclasses) from the label-names file beside train.bin, one name a
// line, blank lines ignored; nil when the file is absent, unreadable or
// holds another number of names.
func CIFAR100ClassNames(dir string, coarse bool) []string {
	b, err := inputfile.Read(cifar100NamesFile(dir, coarse), maxNamesFile, "a label-names file")
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	if want := cifar100Format(coarse).classes; len(names) != want {
		return nil
	}
	return names
}

// unpackCIFAR100 extracts the cifar-100-binary/ members of the gzipped tar
// archive into the new folder out and checks train.bin and test.bin: their
// record counts (f.Rows, f.TestRows) and every label.
func unpackCIFAR100(archive, out string, f RemoteFile) error {
	if err := unpackFolder(archive, out, CIFAR100Dir); err != nil {
		return err
	}
	for _, file := range []struct {
		name string
		rows int
	}{{cifar100TrainFile, f.Rows}, {cifar100TestFile, f.TestRows}} {
		p := filepath.Join(out, file.name)
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("archive holds no %s/%s", CIFAR100Dir, file.name)
		}
		if file.rows > 0 && fi.Size() != int64(file.rows)*CIFAR100RecordSize {
			return fmt.Errorf("%s/%s: %d bytes, want %d records of %d bytes", CIFAR100Dir, file.name, fi.Size(), file.rows, CIFAR100RecordSize)
		}
		if _, err := loadCIFARFiles([]string{p}, file.name, cifar100Format(false)); err != nil {
			return fmt.Errorf("%s/%s: %w", CIFAR100Dir, file.name, errors.Unwrap(err))
		}
	}
	return nil
}

// cifar100Spec is CIFAR-100 in the data folder, downloaded by `gtstorm
// data fetch cifar100`.
func cifar100Spec() Spec {
	return Spec{
		Name: "cifar100", Model: "cifar-cnn", CoarseLabels: true,
		Load: func(dir string, opt LoadOptions) (*Dataset, *Dataset, error) {
			dir, err := orDefaultDir(dir)
			if err != nil {
				return nil, nil, err
			}
			return LoadCIFAR100(dir, opt)
		},
		Files: func(dir string, opt LoadOptions) ([]string, error) {
			d, err := orDefaultDir(dir)
			if err != nil {
				return nil, err
			}
			f := cifar100Folder(d)
			return []string{filepath.Join(f, cifar100TrainFile), filepath.Join(f, cifar100TestFile), cifar100NamesFile(d, opt.CoarseLabels)}, nil
		},
		Sizes: func(_ string, opt LoadOptions) Sizes {
			return cifarSizes("CIFAR-100", cifar100Format(opt.CoarseLabels).classes)
		},
		Survey: surveyCIFAR100,
		ClassNames: func(dir string, opt LoadOptions) []string {
			if dir, err := orDefaultDir(dir); err == nil {
				return CIFAR100ClassNames(dir, opt.CoarseLabels)
			}
			return nil
		},
		Remote: &Remote{
			Name: "cifar100", Format: "cifar100", Unpack: unpackCIFAR100,
			Files: []RemoteFile{{
				URL:  "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz",
				Size: 168513733,
				MD5:  "03b5dce01913d631647c71ecec9e9cb8",
				Dest: CIFAR100Dir,
				Rows: 50000, TestRows: 10000,
			}},
			Note: "CIFAR-100 binary version (161 MB), checked against the MD5 published at https://www.cs.toronto.edu/~kriz/cifar.html",
		},
	}
}

// surveyCIFAR100 reports CIFAR-100 in the data folder dir.
func surveyCIFAR100(dir string) []Status {
	p := filepath.Join(dir, CIFAR100Dir)
	if !exists(filepath.Join(p, cifar100TrainFile)) {
		return []Status{{Name: "cifar100", Path: p, DataDir: dir, Fetchable: true, Note: "not downloaded"}}
	}
	note := "CIFAR-100 binary version, 100 fine classes (20 with --coarse-labels)"
	if CIFAR100ClassNames(p, false) == nil {
		note += "; no " + cifar100FineNames + ": classes are numbered"
	}
	return []Status{statusOf("cifar100", p, dir, note, true,
		func() (*Dataset, *Dataset, error) { return LoadCIFAR100(p, LoadOptions{}) })}
}
