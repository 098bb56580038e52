package data

// The registry entry of MNIST, and the sizes of the MNIST-like IDX sets
// (MNIST and Fashion-MNIST).

// idxSizes returns the sizes of a 60,000 + 10,000 set of 28×28 images in
// 10 classes held as bytes. Each IDX file is read into a buffer that
// doubles: the images' earlier buffers (about 1.4× the last) are garbage
// by the end.
func idxSizes(what string) Sizes {
	const train, test, sample = 60000, 10000, 28*28 + 1 // pixels and a label
	return Sizes{
		Train: train, Test: test, Shape: []int{1, 28, 28}, Classes: mnistClasses,
		Bytes: (train + test) * sample, Load: train * (sample - 1) * 7 / 5,
		Detail: what + ", 70000 images",
	}
}

// mnistSpec is MNIST: the copy shipped in the GoMNIST module, or any
// folder of the four MNIST files.
func mnistSpec() Spec {
	return Spec{
		Name:  "mnist",
		Model: "mnist-cnn",
		Load: func(dir string, _ LoadOptions) (*Dataset, *Dataset, error) {
			return LoadMNIST(dir)
		},
		Files: func(dir string, _ LoadOptions) ([]string, error) {
			if dir == "" {
				d, err := MNISTDir()
				if err != nil {
					return nil, err
				}
				dir = d
			}
			return idxFiles(dir), nil
		},
		Sizes:  func(string, LoadOptions) Sizes { return idxSizes("MNIST") },
		Survey: surveyMNIST,
	}
}

// idxFiles returns the four MNIST-named files of dir that exist (plain or
// .gz).
func idxFiles(dir string) []string {
	var paths []string
	for _, f := range []string{MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels} {
		if p, err := findMNISTFile(dir, f); err == nil {
			paths = append(paths, p)
		}
	}
	return paths
}

// surveyMNIST reports MNIST from the GoMNIST module and, if the data
// folder dir is an MNIST-format folder, that folder.
func surveyMNIST(dir string) []Status {
	st := Status{Name: "mnist", Note: "shipped in the Go module " + MNISTModule + ", no download needed"}
	if p, err := MNISTDir(); err != nil {
		st.Err = err
	} else {
		st.Path, st.Present = p, true
		st.load(func() (*Dataset, *Dataset, error) { return LoadMNIST(p) })
	}
	out := []Status{st}
	if hasMNIST(dir) {
		out = append(out, statusOf("mnist", dir, dir, "MNIST-format folder", false,
			func() (*Dataset, *Dataset, error) { return LoadMNIST(dir) }))
	}
	return out
}
