package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// CIFAR-10 binary layout: each record is one label byte followed by the
// 32×32 red, green and blue planes.
const (
	CIFARDir        = "cifar-10-batches-bin" // folder name inside the official archive
	cifarSide       = 32
	cifarPixels     = 3 * cifarSide * cifarSide
	CIFARRecordSize = 1 + cifarPixels // 3073 bytes
	cifarClasses    = 10
)

// cifarFormat is the record layout of a CIFAR binary version: header label
// bytes, then the red, green and blue 32×32 planes.
type cifarFormat struct {
	what    string // "CIFAR-10", for messages
	header  int    // label bytes before the pixels
	label   int    // the one that is the label
	classes int    // the labels lie in [0, classes)
	// bounds, if set, gives every header byte its range ([0, bounds[k]));
	// else only the label's is checked.
	bounds []int
}

// cifar10Format is CIFAR-10's layout: a label byte and the pixels.
var cifar10Format = cifarFormat{what: "CIFAR-10", header: 1, classes: cifarClasses}

// size returns the bytes of one record.
func (f cifarFormat) size() int { return f.header + cifarPixels }

// The file names of the binary version (never modified).
var cifarTrainFiles = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}

const cifarTestFile = "test_batch.bin"

// LoadCIFAR10 loads the binary version of CIFAR-10 from dir, the folder
// holding data_batch_1..5.bin and test_batch.bin (or its parent, when that
// holds a cifar-10-batches-bin folder). Samples have Shape [3 32 32], channel
// first. With normalize, both sets are standardised per channel with the
// mean and standard deviation of the training set (see NormalizeChannels).
func LoadCIFAR10(dir string, normalize bool) (train, test *Dataset, err error) {
	root := dir
	dir = cifarFolder(dir)
	if _, err := os.Stat(filepath.Join(dir, cifarTrainFiles[0])); errors.Is(err, os.ErrNotExist) {
		// Not fetched yet: a *NotPresentError, whose advice fetches it.
		return nil, nil, &NotPresentError{Name: "cifar10", Dir: root, Path: filepath.Join(dir, cifarTrainFiles[0])}
	}
	paths := make([]string, len(cifarTrainFiles))
	for i, name := range cifarTrainFiles {
		paths[i] = filepath.Join(dir, name)
	}
	if train, err = loadCIFARFiles(paths, "cifar10-train", cifar10Format); err != nil {
		return nil, nil, err
	}
	if test, err = loadCIFARFiles([]string{filepath.Join(dir, cifarTestFile)}, "cifar10-test", cifar10Format); err != nil {
		return nil, nil, err
	}
	if normalize {
		if err := NormalizeChannels(train, test); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}

// cifarFolder returns dir/cifar-10-batches-bin when dir itself holds no
// CIFAR file but that subfolder exists, else dir.
func cifarFolder(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, cifarTrainFiles[0])); err == nil {
		return dir
	}
	sub := filepath.Join(dir, CIFARDir)
	if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
		return sub
	}
	return dir
}

// loadCIFARFiles reads whole CIFAR binary files of format f into one byte
// Dataset. Every file's size is checked against the record length before
// anything is allocated.
func loadCIFARFiles(paths []string, name string, f cifarFormat) (*Dataset, error) {
	records := 0
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", name, err)
		}
		if err := f.checkSize(fi.Size()); err != nil {
			return nil, fmt.Errorf("load %s: %w", p, err)
		}
		records += int(fi.Size() / int64(f.size()))
	}
	d := &Dataset{
		Name:    name,
		Shape:   []int{3, cifarSide, cifarSide},
		Classes: f.classes,
		Labels:  make([]uint8, records),
		Bytes:   make([]uint8, records*cifarPixels),
	}
	at := 0
	for _, p := range paths {
		n, err := f.readFile(p, d.Labels[at:], d.Bytes[at*cifarPixels:])
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", p, err)
		}
		at += n
	}
	if at != records {
		return nil, fmt.Errorf("load %s: files changed while loading (%d of %d records)", name, at, records)
	}
	return d, nil
}

// readFile decodes the records of the file at path into the front of
// labels and pix and returns their count.
func (f cifarFormat) readFile(path string, labels, pix []byte) (int, error) {
	file, size, err := inputfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	n := int(size / int64(f.size()))
	if n > len(labels) {
		return 0, fmt.Errorf("grew to %d bytes while loading", size)
	}
	return n, f.decode(bufio.NewReaderSize(file, 1<<20), labels[:n], pix[:n*cifarPixels])
}

// checkCIFARSize requires a file size that is a positive whole number of
// 3073-byte records.
func checkCIFARSize(size int64) error { return cifar10Format.checkSize(size) }

// checkSize requires a file size that is a positive whole number of
// records.
func (f cifarFormat) checkSize(size int64) error {
	rec := int64(f.size())
	if size == 0 {
		return fmt.Errorf("empty file, want %d-byte %s records", rec, f.what)
	}
	if size%rec != 0 {
		return fmt.Errorf("size %d bytes is not a whole number of %d-byte %s records (%d records and %d bytes over); is this the binary version?",
			size, rec, f.what, size/rec, size%rec)
	}
	return nil
}

// decodeCIFAR reads len(labels) CIFAR-10 records from r into labels and
// pix (cifarPixels bytes per record), then requires r to end.
func decodeCIFAR(r io.Reader, labels []uint8, pix []byte) error {
	return cifar10Format.decode(r, labels, pix)
}

// decode reads len(labels) records from r into labels and pix (cifarPixels
// bytes per record), then requires r to end.
func (f cifarFormat) decode(r io.Reader, labels []uint8, pix []byte) error {
	rec := make([]byte, f.size())
	for i := range labels {
		if _, err := io.ReadFull(r, rec); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("ends inside record %d of %d", i, len(labels))
			}
			return err
		}
		for k := range f.header {
			bound := f.classes
			if f.bounds != nil {
				bound = f.bounds[k]
			} else if k != f.label {
				continue
			}
			if int(rec[k]) >= bound {
				return fmt.Errorf("record %d (byte offset %d): %slabel %d is out of range [0, %d)",
					i, int64(i)*int64(f.size()), f.labelName(k), rec[k], bound)
			}
		}
		labels[i] = rec[f.label]
		copy(pix[i*cifarPixels:(i+1)*cifarPixels], rec[f.header:])
	}
	return expectEOF(r)
}

// labelName names header byte k in messages: "" for CIFAR-10's only label,
// "coarse " or "fine " for CIFAR-100's.
func (f cifarFormat) labelName(k int) string {
	if f.header == 2 {
		return [2]string{"coarse ", "fine "}[k]
	}
	return ""
}

// NormalizeChannels sets Mean and Std of every byte Dataset in sets to the
// per-channel mean and standard deviation of ref (usually the training set),
// so that Dense returns standardised features for all of them. A constant
// channel (std 0) gets Std 1. ref's Shape[0] is the channel count; every set
// must have byte storage and ref's shape.
func NormalizeChannels(ref *Dataset, sets ...*Dataset) error {
	all := append([]*Dataset{ref}, sets...)
	for _, d := range all {
		if d.Bytes == nil || len(d.Shape) == 0 || !slices.Equal(d.Shape, ref.Shape) || d.Len() == 0 {
			return fmt.Errorf("normalize %s: want a non-empty byte dataset of shape %v, got shape %v", d.Name, ref.Shape, d.Shape)
		}
	}
	ch := ref.Shape[0]
	per := ref.Dim() / ch
	mean := make([]float32, ch)
	std := make([]float32, ch)
	n := ref.Len()
	for c := 0; c < ch; c++ {
		var sum, sq uint64
		for i := 0; i < n; i++ {
			for _, b := range ref.Bytes[i*ref.Dim()+c*per : i*ref.Dim()+(c+1)*per] {
				sum += uint64(b)
				sq += uint64(b) * uint64(b)
			}
		}
		cnt := float64(n * per)
		m := float64(sum) / cnt / 255
		v := float64(sq)/cnt/(255*255) - float64(m*m)
		s := math.Sqrt(max(v, 0))
		if s == 0 {
			s = 1
		}
		mean[c], std[c] = float32(m), float32(s)
	}
	for _, d := range all {
		d.Mean, d.Std = mean, std
	}
	return nil
}
