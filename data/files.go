package data

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
)

// Files returns the files LoadWith(name, dir, …) reads, as absolute paths,
// so that a caller can fingerprint a run's inputs. Files that the loader
// would look for but that do not exist are left out (the load reports them).
func Files(name, dir string) ([]string, error) {
	var paths []string
	switch {
	case name == "mnist":
		if dir == "" {
			d, err := MNISTDir()
			if err != nil {
				return nil, err
			}
			dir = d
		}
		for _, f := range []string{MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels} {
			if p, err := findMNISTFile(dir, f); err == nil {
				paths = append(paths, p)
			}
		}
	case name == "cifar10":
		d, err := orDefaultDir(dir)
		if err != nil {
			return nil, err
		}
		dir = cifarFolder(d)
		for _, f := range append(slices.Clone(cifarTrainFiles), cifarTestFile) {
			paths = append(paths, filepath.Join(dir, f))
		}
	case name == "libsvm":
		paths = []string{dir, dir + ".t"}
	case slices.Contains(libsvmSets, name):
		d, err := orDefaultDir(dir)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(d, name)
		paths = []string{p, p + ".t"}
	default:
		return nil, errors.New("unknown dataset " + name)
	}
	var out []string
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		out = append(out, abs)
	}
	return out, nil
}
