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
	if train, err = loadCIFARFiles(paths, "cifar10-train"); err != nil {
		return nil, nil, err
	}
	if test, err = loadCIFARFiles([]string{filepath.Join(dir, cifarTestFile)}, "cifar10-test"); err != nil {
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

// loadCIFARFiles reads whole CIFAR-10 binary files into one byte Dataset.
// Every file's size is checked against the record length before anything is
// allocated.
func loadCIFARFiles(paths []string, name string) (*Dataset, error) {
	records := 0
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("cifar10: %w", err)
		}
		if err := checkCIFARSize(fi.Size()); err != nil {
			return nil, fmt.Errorf("load %s: %w", p, err)
		}
		records += int(fi.Size() / CIFARRecordSize)
	}
	d := &Dataset{
		Name:    name,
		Shape:   []int{3, cifarSide, cifarSide},
		Classes: cifarClasses,
		Labels:  make([]uint8, records),
		Bytes:   make([]uint8, records*cifarPixels),
	}
	at := 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("cifar10: %w", err)
		}
		fi, err := f.Stat()
		if err == nil {
			n := int(fi.Size() / CIFARRecordSize)
			if at+n > records {
				err = fmt.Errorf("grew to %d bytes while loading", fi.Size())
			} else {
				err = decodeCIFAR(bufio.NewReaderSize(f, 1<<20), d.Labels[at:at+n], d.Bytes[at*cifarPixels:(at+n)*cifarPixels])
				at += n
			}
		}
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", p, err)
		}
	}
	if at != records {
		return nil, fmt.Errorf("cifar10: files changed while loading (%d of %d records)", at, records)
	}
	return d, nil
}

// checkCIFARSize requires a file size that is a positive whole number of
// 3073-byte records.
func checkCIFARSize(size int64) error {
	if size == 0 {
		return errors.New("empty file, want 3073-byte CIFAR-10 records")
	}
	if size%CIFARRecordSize != 0 {
		return fmt.Errorf("size %d bytes is not a whole number of 3073-byte CIFAR-10 records (%d records and %d bytes over); is this the binary version?",
			size, size/CIFARRecordSize, size%CIFARRecordSize)
	}
	return nil
}

// decodeCIFAR reads len(labels) records from r into labels and pix
// (cifarPixels bytes per record), then requires r to end.
func decodeCIFAR(r io.Reader, labels []uint8, pix []byte) error {
	var rec [CIFARRecordSize]byte
	for i := range labels {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("ends inside record %d of %d", i, len(labels))
			}
			return err
		}
		if rec[0] >= cifarClasses {
			return fmt.Errorf("record %d (byte offset %d): label %d is out of range [0, %d)",
				i, int64(i)*CIFARRecordSize, rec[0], cifarClasses)
		}
		labels[i] = rec[0]
		copy(pix[i*cifarPixels:(i+1)*cifarPixels], rec[1:])
	}
	return expectEOF(r)
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
