package data

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// source is an opened data file, transparently decompressed when it starts
// with the gzip or bzip2 magic bytes.
type source struct {
	io.Reader
	f          *os.File
	gz         *gzip.Reader
	compressed bool
	size       int64 // size of the file on disk
}

// openSource opens path for reading and detects gzip (1f 8b) or bzip2 ("BZh")
// compression from its first bytes. Close releases the file.
//
// Only a regular file is opened: a directory, a device such as /dev/zero or
// a named pipe is refused (see inputfile.Open) before anything is read.
func openSource(path string) (*source, error) {
	f, size, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	s := &source{f: f, size: size}
	br := bufio.NewReaderSize(f, 1<<16)
	head, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("gzip header: %w", err)
		}
		s.gz, s.Reader, s.compressed = gz, gz, true
	case bytes.Equal(head, []byte("BZh")):
		s.Reader, s.compressed = bzip2.NewReader(br), true
	default:
		s.Reader = br
	}
	return s, nil
}

// Close closes the underlying file.
func (s *source) Close() error {
	if s.gz != nil {
		s.gz.Close()
	}
	return s.f.Close()
}

// errShort reports a stream that ended before the expected number of bytes.
type errShort struct{ got, want int64 }

func (e errShort) Error() string {
	return fmt.Sprintf("ends after %d of %d bytes", e.got, e.want)
}

// readExactly reads exactly n bytes from r and then requires r to be at its
// end (which also makes a gzip stream verify its checksum). Memory grows
// with the bytes actually read, never with n alone, so a header claiming
// more data than the stream holds cannot force a large allocation.
func readExactly(r io.Reader, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("negative length %d", n)
	}
	buf := make([]byte, 0, min(n, 1<<20))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*int64(cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		k, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			if int64(len(buf)) < n {
				return nil, errShort{int64(len(buf)), n}
			}
			return buf, nil
		}
		if err != nil {
			return nil, readErr(err, int64(len(buf)))
		}
	}
	if err := expectEOF(r); err != nil {
		return nil, err
	}
	return buf, nil
}

// errTrailing reports bytes after the data a header describes.
var errTrailing = errors.New("holds more bytes than its header describes")

// expectEOF requires r to hold no further bytes.
func expectEOF(r io.Reader) error {
	var one [1]byte
	for {
		k, err := r.Read(one[:])
		if k > 0 {
			return errTrailing
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readErr(err, -1)
		}
	}
}

// readErr describes a read failure, naming truncation plainly.
func readErr(err error, at int64) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		if at >= 0 {
			return fmt.Errorf("truncated (compressed stream ends unexpectedly after %d bytes of data)", at)
		}
		return errors.New("truncated (compressed stream ends unexpectedly)")
	}
	if at >= 0 {
		return fmt.Errorf("corrupt after %d bytes of data: %w", at, err)
	}
	return fmt.Errorf("corrupt: %w", err)
}
