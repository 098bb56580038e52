package data

import (
	"path/filepath"
	"slices"
)

// The registry entry of CIFAR-10, binary version.

// cifar10Spec is CIFAR-10 in the data folder, downloaded by `gtstorm data
// fetch cifar10`.
func cifar10Spec() Spec {
	return Spec{
		Name:  "cifar10",
		Model: "cifar-cnn",
		Load: func(dir string, opt LoadOptions) (*Dataset, *Dataset, error) {
			dir, err := orDefaultDir(dir)
			if err != nil {
				return nil, nil, err
			}
			return LoadCIFAR10(dir, opt.Normalize)
		},
		Files: func(dir string, _ LoadOptions) ([]string, error) {
			d, err := orDefaultDir(dir)
			if err != nil {
				return nil, err
			}
			d = cifarFolder(d)
			var paths []string
			for _, f := range slices.Concat(cifarTrainFiles, []string{cifarTestFile}) {
				paths = append(paths, filepath.Join(d, f))
			}
			return paths, nil
		},
		Sizes: func(string, LoadOptions) Sizes {
			return cifarSizes("CIFAR-10", cifarClasses)
		},
		Survey: func(dir string) []Status {
			cifar := filepath.Join(dir, CIFARDir)
			if !exists(filepath.Join(cifar, cifarTrainFiles[0])) {
				return []Status{{Name: "cifar10", Path: cifar, DataDir: dir, Fetchable: true, Note: "not downloaded"}}
			}
			return []Status{statusOf("cifar10", cifar, dir, "CIFAR-10 binary version", true,
				func() (*Dataset, *Dataset, error) { return LoadCIFAR10(cifar, false) })}
		},
		ClassNames: func(string, LoadOptions) []string { return slices.Clone(cifar10Names) },
		Remote: &Remote{
			Name: "cifar10", Format: "cifar10",
			Files: []RemoteFile{{
				URL:  "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
				Size: 170052171,
				MD5:  "c32a1d4ab5d03f1284b67883e8d87530",
				Dest: CIFARDir,
				Rows: 10000,
			}},
			Note: "CIFAR-10 binary version (162 MB), checked against the MD5 published at https://www.cs.toronto.edu/~kriz/cifar.html",
		},
	}
}

// cifar10Names are the CIFAR-10 class names by label.
var cifar10Names = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// cifarSizes returns the sizes of a 50,000 + 10,000 set of 3×32×32 images
// in classes classes, each kept as its pixels and a label byte.
func cifarSizes(what string, classes int) Sizes {
	const train, test = 50000, 10000
	return Sizes{
		Train: train, Test: test, Shape: []int{3, cifarSide, cifarSide}, Classes: classes,
		Bytes: (train + test) * CIFARRecordSize, Load: 1 << 20,
		Detail: what + ", 60000 images",
	}
}
