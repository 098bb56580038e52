package data

import (
	"fmt"
	"path/filepath"
	"slices"
)

// The registry entry of --dataset images, and its loader.

// ImageFolderStats says how an image folder was loaded.
type ImageFolderStats struct {
	Cached  bool // the pixels came from the cache, nothing was decoded
	Skipped int  // images that do not decode, skipped under SkipBad
}

// LoadImageFolder loads the image folder dir (see the layout above): every
// image converted to opt.Channels and resized to opt.ImageSize square as
// ImageBytes converts them (BT.601 luma for grey, area averaging when
// shrinking, bilinear interpolation when enlarging), labels the sorted
// class folders' indices. The training set is DIR/train's images, the test
// set DIR/test's; without them, a stratified opt.TestSplit fraction of
// every class, fixed by the folder alone, is the test set (a TestSplit
// given for a folder with DIR/test is refused, not ignored). Decoded pixels
// come from the cache when the folder is unchanged (see imageCacheMagic).
// Errors name the folder or file: no class folders, an empty class folder,
// an image that does not decode (skipped and counted with opt.SkipBad).
func LoadImageFolder(dir string, opt LoadOptions) (train, test *Dataset, st ImageFolderStats, err error) {
	o, err := imageOpts(opt)
	if err != nil {
		return nil, nil, st, err
	}
	s, err := scanImageFolder(dir)
	if err != nil {
		return nil, nil, st, err
	}
	if s.split && opt.TestSplit != 0 {
		return nil, nil, st, fmt.Errorf("image folder %s: --test-split %v, but %s holds the test set; want --test-split only for a folder without a test folder", dir, opt.TestSplit, filepath.Join(dir, "test"))
	}
	w := progressWriter(opt)
	d, cached, err := cachedImages(s, o, w)
	if err != nil {
		return nil, nil, st, err
	}
	st.Cached = cached
	files := s.all()
	for _, msg := range d.bad {
		if msg == "" {
			continue
		}
		if !o.skipBad {
			return nil, nil, st, fmt.Errorf("image folder: %s (--skip-bad skips such images)", msg)
		}
		st.Skipped++
	}
	if st.Skipped > 0 && w != nil {
		fmt.Fprintf(w, "image folder %s: skipped %d images that do not decode\n", dir, st.Skipped)
	}
	var trainIdx, testIdx []int
	if s.split {
		trainIdx, testIdx = seq(0, len(s.train)), seq(len(s.train), len(files))
	} else {
		trainIdx, testIdx = s.holdOut(o.split)
		if len(testIdx) == 0 {
			return nil, nil, st, fmt.Errorf("image folder %s: --test-split %v holds out no image of %d; raise it or add %s/train and %s/test", dir, o.split, len(files), dir, dir)
		}
	}
	build := func(name string, idx []int) (*Dataset, error) {
		ds := &Dataset{Name: name, Shape: o.shape(), Classes: len(s.classes)}
		dim := ds.Dim()
		ds.Labels, ds.Bytes = make([]uint8, 0, len(idx)), make([]uint8, 0, len(idx)*dim)
		for _, i := range idx {
			if d.bad[i] == "" {
				ds.Labels = append(ds.Labels, uint8(files[i].label))
				ds.Bytes = append(ds.Bytes, d.pixels[i*dim:(i+1)*dim]...)
			}
		}
		if ds.Len() == 0 {
			return nil, fmt.Errorf("image folder %s: no %s images decode", dir, name)
		}
		return ds, nil
	}
	if train, err = build("images-train", trainIdx); err != nil {
		return nil, nil, st, err
	}
	if test, err = build("images-test", testIdx); err != nil {
		return nil, nil, st, err
	}
	return train, test, st, nil
}

// seq returns lo, lo+1, …, hi−1.
func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// imageFolderSpec is --dataset images: an image folder named by
// --data-dir. Its images are not listed one by one among a run's inputs
// (a folder may hold a million): the folder is one input (Folder), and the
// cache's folder fingerprint guards the decoded pixels.
func imageFolderSpec() Spec {
	return Spec{
		Name:  imageFolderName,
		Model: "cifar-cnn",
		Load: func(dir string, opt LoadOptions) (*Dataset, *Dataset, error) {
			train, test, _, err := LoadImageFolder(dir, opt)
			return train, test, err
		},
		Files:  func(string, LoadOptions) ([]string, error) { return nil, nil },
		Folder: imageFolderInput,
		Sizes:  imageFolderSizes,
		Survey: surveyImageFolder,
		ClassNames: func(dir string, _ LoadOptions) []string {
			if s, err := scanImageFolder(dir); err == nil {
				return slices.Clone(s.classes)
			}
			return nil
		},
	}
}

// imageFolderSizes lists the folder dir (nothing is decoded) for its
// counts and classes; a folder that cannot be listed has none (the load
// reports why), and settings out of range give the default shape (their
// own checks report them).
func imageFolderSizes(dir string, opt LoadOptions) Sizes {
	o, err := imageOpts(opt)
	if err != nil {
		o, _ = imageOpts(LoadOptions{})
	}
	sz := Sizes{Shape: o.shape(), Classes: 1, Detail: "image folder " + dir}
	s, err := scanImageFolder(dir)
	if err != nil {
		return sz
	}
	sz.Classes, sz.Train, sz.Test = len(s.classes), len(s.train), len(s.test)
	if !s.split {
		tr, te := s.holdOut(o.split)
		sz.Train, sz.Test = len(tr), len(te)
	}
	dim := int64(o.channels * o.size * o.size)
	n := int64(sz.Train + sz.Test)
	sz.Bytes, sz.Load = n*(dim+1), 2*n*dim // the cache file read whole, and the decoded pixels
	sz.Detail = fmt.Sprintf("image folder, %d images", n)
	return sz
}
