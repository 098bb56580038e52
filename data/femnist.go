package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// FEMNIST in LEAF's JSON format (Caldas et al. 2018): DIR/train/*.json and
// DIR/test/*.json, each file an object
//
//	{"users": [W...], "num_samples": [N...],
//	 "user_data": {W: {"x": [[784 values]...], "y": [labels...]}}}
//
// of 28×28 grayscale images of digits and letters in 62 classes (0-9, A-Z,
// a-z), grouped by the writer W who drew them. LEAF's data_to_json.py
// stores each pixel as its grey level over 255, so the paper's white
// background is 1 and the ink near 0: the reverse of MNIST. The loader
// stores 255 − round(255·v), so that a sample reads as MNIST's do (0 the
// background, 1 the ink, in steps of 1/255); LEAF's values, all k/255,
// come back exactly as 1 − v.
const (
	// FEMNISTDir is the folder of a data folder that holds train/ and test/.
	FEMNISTDir     = "femnist"
	femnistClasses = 62
	femnistSide    = 28
	femnistPixels  = femnistSide * femnistSide
	// maxLEAFFile bounds one JSON file (LEAF writes at most 100 writers a
	// file, a few hundred MB).
	maxLEAFFile = 4 << 30
)

// leafWriter is one writer's samples in a LEAF file: its images as
// MNIST-convention bytes and its labels.
type leafWriter struct {
	pix    []byte
	labels []uint8
	hasX   bool
	hasY   bool
}

// leafFile is one parsed LEAF JSON file.
type leafFile struct {
	path       string
	users      []string
	numSamples []int
	hasUsers   bool
	hasCounts  bool
	data       map[string]*leafWriter
}

// readLEAFFile streams the LEAF JSON file at path (a regular file of at
// most maxLEAFFile bytes) and checks it; its errors are one line naming
// the file and, where it is at fault, the writer.
func readLEAFFile(path string) (*leafFile, error) {
	f, size, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("femnist: %w", err)
	}
	defer f.Close()
	if size > maxLEAFFile {
		return nil, fmt.Errorf("femnist %s: %d bytes, more than the %d a LEAF JSON file may take", path, size, int64(maxLEAFFile))
	}
	dec := json.NewDecoder(io.LimitReader(f, maxLEAFFile+1))
	lf := &leafFile{path: path, data: map[string]*leafWriter{}}
	if err := lf.parse(dec); err != nil {
		return nil, fmt.Errorf("femnist %s: %w", path, err)
	}
	if err := lf.check(); err != nil {
		return nil, fmt.Errorf("femnist %s: %w", path, err)
	}
	return lf, nil
}

// delim reads the next token of dec, which must be the delimiter want.
func delim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: %w", what, jsonErr(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("%s: found %v, want %q", what, tok, string(want))
	}
	return nil
}

// objectKey reads the next key of an object.
func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", jsonErr(err)
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("found %v, want an object key", tok)
	}
	return key, nil
}

// jsonErr turns an end of file inside a value into a message.
func jsonErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the file ends inside the JSON value (truncated?)")
	}
	return err
}

// parse reads the file's object: users, num_samples and user_data in any
// order, other keys skipped.
func (lf *leafFile) parse(dec *json.Decoder) error {
	if err := delim(dec, '{', "the file"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		if seen[key] {
			return fmt.Errorf("key %q given twice", key)
		}
		seen[key] = true
		switch key {
		case "users":
			err, lf.hasUsers = dec.Decode(&lf.users), true
		case "num_samples":
			err, lf.hasCounts = dec.Decode(&lf.numSamples), true
		case "user_data":
			err = lf.parseUserData(dec)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, jsonErr(err))
		}
	}
	if err := delim(dec, '}', "the file"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more after the JSON object")
	}
	return nil
}

// parseUserData reads user_data: an object of writers.
func (lf *leafFile) parseUserData(dec *json.Decoder) error {
	if err := delim(dec, '{', "want an object of writers"); err != nil {
		return err
	}
	for dec.More() {
		name, err := objectKey(dec)
		if err != nil {
			return err
		}
		if lf.data[name] != nil {
			return fmt.Errorf("writer %q given twice", name)
		}
		w := &leafWriter{}
		if err := w.parse(dec); err != nil {
			return fmt.Errorf("writer %q: %w", name, err)
		}
		lf.data[name] = w
	}
	return delim(dec, '}', "end of user_data")
}

// parse reads one writer's {"x": ..., "y": ...}.
func (w *leafWriter) parse(dec *json.Decoder) error {
	if err := delim(dec, '{', "want an object with x and y"); err != nil {
		return err
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		switch key {
		case "x":
			if w.hasX {
				return errors.New("x given twice")
			}
			w.hasX = true
			err = w.parseImages(dec)
		case "y":
			if w.hasY {
				return errors.New("y given twice")
			}
			w.hasY = true
			err = w.parseLabels(dec)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	if err := delim(dec, '}', "end of the writer"); err != nil {
		return err
	}
	switch {
	case !w.hasX || !w.hasY:
		return errors.New("want both x (images) and y (labels)")
	case len(w.pix)/femnistPixels != len(w.labels):
		return fmt.Errorf("%d images in x but %d labels in y", len(w.pix)/femnistPixels, len(w.labels))
	}
	return nil
}

// parseImages reads x, an array of images of 784 values in [0, 1], into
// MNIST-convention bytes. The decoder takes the array whole (checking its
// syntax) and leafPixels reads its numbers, several times faster than
// decoding them one by one.
func (w *leafWriter) parseImages(dec *json.Decoder) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("x: %w", jsonErr(err))
	}
	p := leafPixels{b: raw}
	if !p.consume('[') {
		return fmt.Errorf("x: found %.20s, want %q", raw, "[")
	}
	for i := 0; !p.consume(']'); i++ {
		if i > 0 && !p.consume(',') {
			return fmt.Errorf("x[%d]: want \",\" between images", i)
		}
		if err := p.image(i, w); err != nil {
			return err
		}
	}
	return nil
}

// parseLabels reads y, an array of whole labels in [0, 62).
func (w *leafWriter) parseLabels(dec *json.Decoder) error {
	var ys []float64
	if err := dec.Decode(&ys); err != nil {
		return fmt.Errorf("y: %w", jsonErr(err))
	}
	w.labels = make([]uint8, len(ys))
	for i, y := range ys {
		if y != math.Trunc(y) || y < 0 || y >= femnistClasses {
			return fmt.Errorf("y[%d] = %g, want a label in 0..%d", i, y, femnistClasses-1)
		}
		w.labels[i] = uint8(y)
	}
	return nil
}

// check compares users, num_samples and user_data.
func (lf *leafFile) check() error {
	switch {
	case !lf.hasUsers || !lf.hasCounts:
		return errors.New("want the keys users, num_samples and user_data")
	case len(lf.users) == 0:
		return errors.New("users is empty: a LEAF file lists at least one writer")
	case len(lf.numSamples) != len(lf.users):
		return fmt.Errorf("%d users but %d num_samples", len(lf.users), len(lf.numSamples))
	}
	listed := make(map[string]bool, len(lf.users))
	for i, u := range lf.users {
		w := lf.data[u]
		switch {
		case listed[u]:
			return fmt.Errorf("writer %q listed twice in users", u)
		case w == nil:
			return fmt.Errorf("writer %q: in users but not in user_data", u)
		case len(w.labels) != lf.numSamples[i]:
			return fmt.Errorf("writer %q: num_samples says %d, user_data holds %d", u, lf.numSamples[i], len(w.labels))
		case len(w.labels) == 0:
			return fmt.Errorf("writer %q: no samples", u)
		}
		listed[u] = true
	}
	if len(lf.data) != len(lf.users) {
		for u := range lf.data {
			if !listed[u] {
				return fmt.Errorf("writer %q: in user_data but not in users", u)
			}
		}
	}
	return nil
}

// leafFiles returns the JSON files of the folder dir, sorted by name.
func leafFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	return files
}

// loadLEAFSet loads the JSON files of dir, in name order, each file's
// writers in its users order, as the set called name; writer ids number
// the set's writers from 0 in that order. A writer in two files is an
// error.
func loadLEAFSet(dir, name string) (*Dataset, error) {
	files := leafFiles(dir)
	if len(files) == 0 {
		return nil, fmt.Errorf("femnist: no .json file in %s", dir)
	}
	d := &Dataset{Name: name, Shape: []int{1, femnistSide, femnistSide}, Classes: femnistClasses}
	from := map[string]string{}
	for _, p := range files {
		lf, err := readLEAFFile(p)
		if err != nil {
			return nil, err
		}
		for _, u := range lf.users {
			if prev, dup := from[u]; dup {
				return nil, fmt.Errorf("femnist %s: writer %q: also in %s", p, u, prev)
			}
			from[u] = p
			id := int32(len(d.WriterNames))
			d.WriterNames = append(d.WriterNames, u)
			w := lf.data[u]
			d.Bytes = append(d.Bytes, w.pix...)
			d.Labels = append(d.Labels, w.labels...)
			for range w.labels {
				d.Writers = append(d.Writers, id)
			}
			delete(lf.data, u) // its bytes are garbage once copied
		}
	}
	return d, nil
}

// LoadFEMNIST loads FEMNIST in LEAF's JSON format from dir: the folder
// holding train/ and test/, or a data folder whose femnist/ (or LEAF's own
// data/) does; dir "" is the default data folder's femnist/. Samples have
// Shape [1 28 28], labels 0..61 and their writers (Dataset.Writers); test
// is nil when there is no test/ folder with JSON files.
func LoadFEMNIST(dir string) (train, test *Dataset, err error) {
	folder, err := femnistFolder(dir)
	if err != nil {
		return nil, nil, err
	}
	if train, err = loadLEAFSet(filepath.Join(folder, "train"), "femnist-train"); err != nil {
		return nil, nil, err
	}
	if testDir := filepath.Join(folder, "test"); len(leafFiles(testDir)) > 0 {
		if test, err = loadLEAFSet(testDir, "femnist-test"); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}

// femnistFolder returns the folder holding train/*.json for --data-dir
// dir: dir, dir/femnist or dir/data (LEAF's leaf/data/femnist/data); for
// dir "", the default data folder's femnist.
func femnistFolder(dir string) (string, error) {
	root, err := orDefaultDir(dir)
	if err != nil {
		return "", err
	}
	candidates := []string{filepath.Join(root, FEMNISTDir)}
	if dir != "" {
		candidates = []string{root, filepath.Join(root, FEMNISTDir), filepath.Join(root, "data")}
	}
	for _, c := range candidates {
		if isLEAFFolder(c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("femnist: no LEAF JSON in %s (want train/*.json and test/*.json there or in its femnist folder; `gtstorm data fetch femnist` says how to make them)", root)
}

// isLEAFFolder reports whether dir/train holds a JSON file.
func isLEAFFolder(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "train")); err != nil || !fi.IsDir() {
		return false
	}
	return len(leafFiles(filepath.Join(dir, "train"))) > 0
}
