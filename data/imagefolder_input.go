package data

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// InputFolder is a folder a dataset reads many files from (an image
// folder), as a run records it among its inputs: one entry for the folder,
// not one per image. Listing is cheap (the files' names, sizes and
// modification times); Digest reads every file.
type InputFolder struct {
	Path    string // the folder, absolute
	Listing string // SHA-256 (hex) of the names, sizes and modification times of the files read, in load order
	root    string // the folder as given
	files   []string
}

// Digest returns the bytes the folder's files hold and a SHA-256 (hex) over
// every file's name (relative to the folder) and content, in load order:
// what the data is, whatever the files' times, so that a folder copied
// elsewhere, or touched, is the same input, and one image rewritten is not.
func (f *InputFolder) Digest() (size int64, sum string, err error) {
	h := sha256.New()
	var n [8]byte
	for _, rel := range f.files {
		binary.LittleEndian.PutUint64(n[:], uint64(len(rel)))
		h.Write(n[:])
		h.Write([]byte(rel))
		k, err := copyFile(h, filepath.Join(f.root, filepath.FromSlash(rel)))
		if err != nil {
			return 0, "", fmt.Errorf("fingerprint image folder %s: %w", f.Path, err)
		}
		binary.LittleEndian.PutUint64(n[:], uint64(k))
		h.Write(n[:])
		size += k
	}
	return size, hex.EncodeToString(h.Sum(nil)), nil
}

// copyFile writes the regular file at path to w and returns its length.
func copyFile(w io.Writer, path string) (int64, error) {
	r, _, err := inputfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return io.Copy(w, r)
}

// imageFolderInput lists the image folder dir as a run's input: the
// images a load reads, train then test, in load order.
func imageFolderInput(dir string, _ LoadOptions) (*InputFolder, error) {
	s, err := scanImageFolder(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("image folder %s: %w", dir, err)
	}
	f := &InputFolder{Path: abs, root: dir}
	for _, im := range s.all() {
		f.files = append(f.files, im.rel)
	}
	h := sha256.New()
	s.hashListing(h)
	f.Listing = hex.EncodeToString(h.Sum(nil))
	return f, nil
}

// surveyImageFolder reports dir for `gtstorm data info` when it is an image
// folder: its classes and images per class, counted from the listing
// (nothing is decoded), at the default sample shape and test split, and
// whether the decoded cache of that shape is current. Any other folder
// gets a line saying how to point data info at one.
func surveyImageFolder(dir string) []Status {
	st := Status{Name: imageFolderName, Path: dir, DataDir: dir}
	s, err := scanImageFolder(dir)
	if err != nil {
		st.Path = ""
		st.Note = "not an image folder here: give data info --data-dir DIR for a folder of DIR/<class>/*.png|jpg|jpeg (or DIR/train/… and DIR/test/…)"
		return []Status{st}
	}
	o, _ := imageOpts(LoadOptions{})
	st.Present = true
	st.Note = fmt.Sprintf("image folder, %d classes %v; %s", len(s.classes), s.classes, imageCacheState(s, o))
	trainIdx, testIdx := seq(0, len(s.train)), seq(0, len(s.test))
	test := s.test
	if !s.split {
		trainIdx, testIdx = s.holdOut(o.split)
		test = s.train
		st.Note += fmt.Sprintf("; no test folder: --test-split %v of each class is held out", o.split)
	}
	st.Train = listedSet(s.train, trainIdx, len(s.classes), o)
	st.Test = listedSet(test, testIdx, len(s.classes), o)
	return []Status{st}
}

// listedSet is the SetInfo of the images idx of files, at o's shape.
func listedSet(files []imageFile, idx []int, classes int, o imageOptions) *SetInfo {
	set := &SetInfo{Samples: len(idx), Shape: o.shape(), Classes: classes, Hist: make([]int, classes)}
	for _, i := range idx {
		set.Hist[files[i].label]++
	}
	return set
}

// imageCacheState says whether the decoded cache of s at o is current,
// reading only the cache's head (its checksum is checked when a run reads
// it).
func imageCacheState(s *imageScan, o imageOptions) string {
	shape := fmt.Sprintf("%dx%dx%d", o.channels, o.size, o.size)
	path, err := imageCachePath(s.dir, o)
	if err != nil {
		return "no cache folder for decoded images"
	}
	r, _, err := inputfile.Open(path)
	if err != nil {
		return "decoded cache at " + shape + ": none yet (the first run decodes every image)"
	}
	defer r.Close()
	head := make([]byte, len(imageCacheMagic)+32)
	fp := s.fingerprint(o)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:len(imageCacheMagic)]) != imageCacheMagic || string(head[len(imageCacheMagic):]) != string(fp[:]) {
		return "decoded cache at " + shape + ": stale (the folder changed; the next run decodes again)"
	}
	return "decoded cache at " + shape + ": current"
}
