package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// The decoded-image cache of an image folder. Decoding thousands of PNG
// or JPEG files takes seconds; a run reads the pixels from one file
// instead. The cache lives in the user's cache folder (os.UserCacheDir,
// e.g. ~/.cache/gtstorm/image-cache on Linux), so that a read-only image
// folder is cached too, one file per folder and sample shape:
// <sha256(absolute folder)[:8]>-<C>x<S>x<S>.bin. It is written atomically
// and holds, in order:
//
//	magic "GTSIMG01"
//	the folder's fingerprint (32 bytes, see imageScan.fingerprint)
//	n, dim: the image count and the bytes per image (uint32 little-endian)
//	n status bytes: 0 decoded, 1 does not decode
//	n·dim pixel bytes, channel first (zero for an image that does not decode)
//	for each image that does not decode: the message's length (uint32) and the message
//	the CRC-32C (Castagnoli) of everything before it, 4 bytes little-endian
//
// A cache whose fingerprint, shape or checksum differs from the folder's
// is ignored and rewritten: renaming, adding, removing or touching an image
// rebuilds it.
const imageCacheMagic = "GTSIMG01"

// maxBadMessage bounds one stored decoding error.
const maxBadMessage = 1024

// crcSize is the size of the cache's checksum.
const crcSize = 4

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodedImages is the pixels of a folder's images, in scan order; bad[i]
// is why image i does not decode ("" for an image that does).
type decodedImages struct {
	pixels []byte
	bad    []string
}

// imageCachePath returns the cache file of the image folder dir at o.
func imageCachePath(dir string, o imageOptions) (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for decoded images: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("image folder %s: %w", dir, err)
	}
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(c, "gtstorm", "image-cache", fmt.Sprintf("%x-%dx%dx%d.bin", h[:8], o.channels, o.size, o.size)), nil
}

// readImageCache returns the cache at path when it holds n images of dim
// bytes for the fingerprint fp and its checksum holds; false otherwise.
func readImageCache(path string, fp [32]byte, n, dim int) (*decodedImages, bool) {
	head := len(imageCacheMagic) + 32 + 8
	limit := int64(head + n + n*dim + n*(4+maxBadMessage) + crcSize)
	b, err := inputfile.Read(path, limit, "an image cache")
	if err != nil || len(b) < head+n+n*dim+crcSize {
		return nil, false
	}
	body, sum := b[:len(b)-crcSize], b[len(b)-crcSize:]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(sum) ||
		string(body[:8]) != imageCacheMagic || !bytes.Equal(body[8:40], fp[:]) ||
		binary.LittleEndian.Uint32(body[40:]) != uint32(n) || binary.LittleEndian.Uint32(body[44:]) != uint32(dim) {
		return nil, false
	}
	status, rest := body[head:head+n], body[head+n:]
	d := &decodedImages{pixels: rest[:n*dim], bad: make([]string, n)}
	rest = rest[n*dim:]
	for i, st := range status {
		if st == 0 {
			continue
		}
		if len(rest) < 4 || int(binary.LittleEndian.Uint32(rest)) > len(rest)-4 {
			return nil, false
		}
		l := int(binary.LittleEndian.Uint32(rest))
		d.bad[i], rest = string(rest[4:4+l]), rest[4+l:]
	}
	return d, len(rest) == 0
}

// writeImageCache writes d as the cache at path for the fingerprint fp.
func writeImageCache(path string, fp [32]byte, d *decodedImages) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("image cache: %w", err)
	}
	n := len(d.bad)
	return atomicfile.Write(path, func(w io.Writer) error {
		h := crc32.New(castagnoli)
		mw := io.MultiWriter(w, h)
		var u [8]byte
		binary.LittleEndian.PutUint32(u[:], uint32(n))
		binary.LittleEndian.PutUint32(u[4:], uint32(len(d.pixels)/max(n, 1)))
		status := make([]byte, n)
		var msgs []byte
		for i, m := range d.bad {
			if m != "" {
				m = m[:min(len(m), maxBadMessage)]
				status[i] = 1
				msgs = binary.LittleEndian.AppendUint32(msgs, uint32(len(m)))
				msgs = append(msgs, m...)
			}
		}
		for _, part := range [][]byte{[]byte(imageCacheMagic), fp[:], u[:], status, d.pixels, msgs} {
			if _, err := mw.Write(part); err != nil {
				return err
			}
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, h.Sum32()))
		return err
	})
}

// decodeImageFolder decodes every image of s at o, reporting progress to
// w (nil for none). An image that does not decode is an error naming the
// file, or with o.skipBad recorded in bad.
func decodeImageFolder(s *imageScan, o imageOptions, w io.Writer) (*decodedImages, error) {
	files := s.all()
	dim := o.channels * o.size * o.size
	d := &decodedImages{pixels: make([]byte, len(files)*dim), bad: make([]string, len(files))}
	p := newCountProgress(w, fmt.Sprintf("decoding %s", s.dir), len(files))
	for i, f := range files {
		img, err := ReadImage(filepath.Join(s.dir, filepath.FromSlash(f.rel)))
		if err != nil {
			if !o.skipBad {
				return nil, fmt.Errorf("image folder: %w (--skip-bad skips such images)", err)
			}
			d.bad[i] = err.Error()
		} else {
			ImageBytes(img, o.channels, o.size, o.size, d.pixels[i*dim:(i+1)*dim])
		}
		p.add()
	}
	p.finish()
	return d, nil
}

// countProgress reports a count of items done: a progress bar on a
// terminal, else a line at every tenth.
type countProgress struct {
	w                 io.Writer
	label             string
	bar               *progressbar.ProgressBar
	total, done, next int
}

func newCountProgress(w io.Writer, label string, total int) *countProgress {
	p := &countProgress{w: w, label: label, total: total, next: max(total/10, 1)}
	if w == nil {
		return p
	}
	if isCharDevice(w) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond))
		return p
	}
	fmt.Fprintf(w, "%s: %d images\n", label, total)
	return p
}

func (p *countProgress) add() {
	p.done++
	switch {
	case p.bar != nil:
		p.bar.Add(1)
	case p.w != nil && p.done >= p.next && p.done < p.total:
		fmt.Fprintf(p.w, "%s: %d of %d\n", p.label, p.done, p.total)
		p.next += max(p.total/10, 1)
	}
}

func (p *countProgress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	} else if p.w != nil {
		fmt.Fprintf(p.w, "%s: %d of %d decoded\n", p.label, p.done, p.total)
	}
}

// isCharDevice reports whether w is a terminal (a character device).
func isCharDevice(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressWriter returns where opt's progress goes: opt.Progress, else
// standard error when it is a terminal, else nowhere.
func progressWriter(opt LoadOptions) io.Writer {
	if opt.Progress != nil {
		return opt.Progress
	}
	if isCharDevice(os.Stderr) {
		return os.Stderr
	}
	return nil
}

// cachedImages returns the decoded images of s at o: from the cache when
// it matches the folder, else decoded and written to the cache (a cache
// that cannot be written is reported to w and the run goes on).
func cachedImages(s *imageScan, o imageOptions, w io.Writer) (*decodedImages, bool, error) {
	fp := s.fingerprint(o)
	n, dim := len(s.train)+len(s.test), o.channels*o.size*o.size
	path, perr := imageCachePath(s.dir, o)
	if perr == nil {
		if d, ok := readImageCache(path, fp, n, dim); ok {
			return d, true, nil
		}
	}
	d, err := decodeImageFolder(s, o, w)
	if err != nil {
		return nil, false, err
	}
	if perr == nil {
		perr = writeImageCache(path, fp, d)
	}
	if perr != nil && w != nil {
		fmt.Fprintf(w, "warning: decoded images not cached: %v\n", perr)
	}
	return d, false, nil
}
