package data

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// An image folder (--dataset images) in torchvision's ImageFolder layout:
// DIR/<class>/…/*.png|jpg|jpeg, or DIR/train/<class>/… and
// DIR/test/<class>/… when DIR holds both a train and a test folder. Classes
// are the class folders' names in sorted (byte) order, label i the i-th, as
// torchvision numbers them. Files of other extensions and hidden files and
// folders (a leading dot) are skipped silently, as torchvision skips them;
// class folders are walked recursively. Without a test folder (DIR/<class>/…,
// or DIR/train/<class>/… when train is DIR's only folder), a stratified
// --test-split fraction of every class is held out as the test set.
const (
	// DefaultImageSize is the side of the square samples when --image-size
	// is 0: CIFAR-10's, which the default network (cifar-cnn) is made for.
	DefaultImageSize = 32
	// MaxImageSize bounds --image-size.
	MaxImageSize = 1024
	// DefaultTestSplit is the fraction of each class held out as the test
	// set when the folder has no test folder and --test-split is 0.
	DefaultTestSplit = 0.1
	// maxImageClasses is the most class folders a folder may hold (labels
	// are bytes).
	maxImageClasses = 256
	// imageFolderName is the dataset's --dataset name.
	imageFolderName = "images"
	// splitSeed fixes the held-out images: the same whatever the run's
	// --seed, so that every run of a study is tested on the same images.
	splitSeed uint64 = 0x696d616765 // "image"
)

// imageExts are the file extensions read as images (lower case).
var imageExts = []string{".png", ".jpg", ".jpeg"}

// imageOptions are the resolved image settings of a LoadOptions.
type imageOptions struct {
	size, channels int
	split          float64
	skipBad        bool
}

// imageOpts resolves opt's image settings, refusing --channels other than
// 1 or 3, a side outside 1..MaxImageSize and a split outside (0, 1).
func imageOpts(opt LoadOptions) (imageOptions, error) {
	o := imageOptions{size: opt.ImageSize, channels: opt.Channels, split: opt.TestSplit, skipBad: opt.SkipBad}
	if o.size == 0 {
		o.size = DefaultImageSize
	}
	if o.channels == 0 {
		o.channels = 3
	}
	if o.split == 0 {
		o.split = DefaultTestSplit
	}
	switch {
	case o.channels != 1 && o.channels != 3:
		return o, fmt.Errorf("--channels %d, want 1 (grayscale) or 3 (colour)", o.channels)
	case o.size < 1 || o.size > MaxImageSize:
		return o, fmt.Errorf("--image-size %d, want 1 to %d", o.size, MaxImageSize)
	case !(o.split > 0 && o.split < 1):
		return o, fmt.Errorf("--test-split %v, want a fraction in (0, 1)", o.split)
	}
	return o, nil
}

// shape returns the [C S S] shape of the samples.
func (o imageOptions) shape() []int { return []int{o.channels, o.size, o.size} }

// imageFile is one image of the folder.
type imageFile struct {
	rel   string // path relative to the folder, slash-separated
	label int
	size  int64
	mtime int64 // modification time, Unix nanoseconds
}

// imageScan is an image folder's layout: its classes and its images in
// order (class by class, each class's files sorted), the training images
// first; split says whether train and test folders were found (else all
// images are in train and the test set is held out).
type imageScan struct {
	dir         string
	classes     []string
	train, test []imageFile
	split       bool
}

// all returns the training then the test images.
func (s *imageScan) all() []imageFile { return slices.Concat(s.train, s.test) }

// scanImageFolder lists the image folder dir: its layout, classes and
// images, with sizes and modification times; nothing is decoded.
func scanImageFolder(dir string) (*imageScan, error) {
	if dir == "" {
		return nil, errors.New("--dataset images needs --data-dir DIR, a folder of class folders (DIR/<class>/*.png|jpg|jpeg)")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("image folder: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("image folder %s: not a folder, want DIR/<class>/*.png|jpg|jpeg", dir)
	}
	s := &imageScan{dir: dir}
	trainDir, testDir := filepath.Join(dir, "train"), filepath.Join(dir, "test")
	hasTrain, hasTest := isDir(trainDir), isDir(testDir)
	if hasTrain && !hasTest {
		// DIR/train/<class>/… without DIR/test: the training folder's
		// classes, a --test-split fraction held out. DIR/train beside a
		// validation folder (ImageNet's train/ and val/) is refused, not
		// read as two classes; beside other folders, train is a class.
		top, err := classFolders(dir)
		if err != nil {
			return nil, err
		}
		for _, v := range []string{"val", "valid", "validation"} {
			if slices.Contains(top, v) {
				return nil, fmt.Errorf("image folder %s holds train and %s but no test folder, want %s/train/<class>/… and %s/test/<class>/… (rename %s to test) or %s/<class>/…", dir, v, dir, dir, v, dir)
			}
		}
		if slices.Equal(top, []string{"train"}) {
			if s.classes, err = classFolders(trainDir); err != nil {
				return nil, err
			}
			if s.train, err = classImages(trainDir, "train/", s.classes, nil); err != nil {
				return nil, err
			}
			return s, nil
		}
	}
	if hasTrain && hasTest {
		s.split = true
		if s.classes, err = classFolders(trainDir); err != nil {
			return nil, err
		}
		if s.train, err = classImages(trainDir, "train/", s.classes, nil); err != nil {
			return nil, err
		}
		testClasses, err := classFolders(testDir)
		if err != nil {
			return nil, err
		}
		if s.test, err = classImages(testDir, "test/", testClasses, s.classes); err != nil {
			return nil, err
		}
		return s, nil
	}
	if s.classes, err = classFolders(dir); err != nil {
		return nil, err
	}
	if s.train, err = classImages(dir, "", s.classes, nil); err != nil {
		return nil, err
	}
	return s, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// classFolders returns the sorted names of dir's class folders (hidden
// ones skipped), refusing a folder without any or with too many.
func classFolders(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("image folder: %w", err)
	}
	var classes []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 && isDir(filepath.Join(dir, e.Name())) {
			classes = append(classes, e.Name())
		}
	}
	switch {
	case len(classes) == 0:
		return nil, fmt.Errorf("image folder %s holds no class folders, want %s/<class>/*.png|jpg|jpeg", dir, dir)
	case len(classes) > maxImageClasses:
		return nil, fmt.Errorf("image folder %s holds %d class folders, at most %d are read", dir, len(classes), maxImageClasses)
	}
	slices.Sort(classes)
	return classes, nil
}

// classImages lists the images of each class folder of dir, labelled by
// the class's index in labels (classes itself when labels is nil),
// refusing an empty class folder and, for a test folder, a class the
// training folder lacks. prefix starts their relative names.
func classImages(dir, prefix string, classes, labels []string) ([]imageFile, error) {
	if labels == nil {
		labels = classes
	}
	var out []imageFile
	for _, c := range classes {
		label, ok := slices.BinarySearch(labels, c)
		if !ok {
			return nil, fmt.Errorf("image folder %s: class folder %s is not among the training classes %v", dir, c, labels)
		}
		n := len(out)
		root := filepath.Join(dir, c)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root && strings.HasPrefix(e.Name(), ".") {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if e.IsDir() || !slices.Contains(imageExts, strings.ToLower(filepath.Ext(p))) {
				return nil
			}
			fi, err := e.Info() // lstat: one call fewer than os.Stat for a plain file
			if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				fi, err = os.Stat(p)
			}
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out = append(out, imageFile{rel: prefix + filepath.ToSlash(rel), label: label, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("image folder: %w", err)
		}
		if len(out) == n {
			return nil, fmt.Errorf("image folder: class folder %s holds no PNG or JPEG images (*.png, *.jpg, *.jpeg)", root)
		}
	}
	return out, nil
}

// fingerprint hashes what the decoded pixels depend on: the format, the
// sample shape and every image's relative name, size and modification
// time, in order.
func (s *imageScan) fingerprint(o imageOptions) [32]byte {
	h := sha256.New()
	var b [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	h.Write([]byte(imageCacheMagic))
	put(int64(o.size))
	put(int64(o.channels))
	s.hashListing(h)
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// hashListing writes every image's relative name, size and modification
// time to h, in load order.
func (s *imageScan) hashListing(h hash.Hash) {
	var b [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	for _, f := range s.all() {
		put(int64(len(f.rel)))
		h.Write([]byte(f.rel))
		put(f.size)
		put(f.mtime)
	}
}

// holdOut returns, for a folder without a test folder, the indices (into
// s.train) of the held-out test images: in every class of n images,
// round(split·n) of them (at most n − 1), chosen by a shuffle seeded by
// splitSeed and the class. Each list is in increasing order.
func (s *imageScan) holdOut(split float64) (train, test []int) {
	start := 0
	for start < len(s.train) {
		end := start
		for end < len(s.train) && s.train[end].label == s.train[start].label {
			end++
		}
		n := end - start
		k := min(int(math.Round(split*float64(n))), n-1)
		perm := rand.New(newPCG(splitSeed, streamPartition, uint64(s.train[start].label))).Perm(n)
		held := slices.Sorted(slices.Values(perm[:k]))
		for i := range n {
			if _, ok := slices.BinarySearch(held, i); ok {
				test = append(test, start+i)
			} else {
				train = append(train, start+i)
			}
		}
		start = end
	}
	return train, test
}
