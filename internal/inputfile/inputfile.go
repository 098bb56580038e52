// Package inputfile opens and reads the files a user names (checkpoints,
// images, configuration files) without trusting them: anything that is not a
// regular file (a device such as /dev/zero, a named pipe, a socket, a
// directory) is refused before a byte is read, and a file is read whole only
// up to a stated limit, so that no input can hang a command on open or make
// it allocate without bound.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the errors of Open and Read for a path that
// names something other than a regular file.
var ErrNotRegular = errors.New("want a regular file")

// Open opens the regular file at path for reading and returns it with its
// size. A named pipe is opened without waiting for a writer (where the
// system allows it) and, like every other kind of file that is not regular,
// refused in one line naming path and what it is ("open PATH: a named pipe
// (FIFO), want a regular file"); symbolic links are followed. Its errors
// are those of os.Open: a *fs.PathError, wrapping ErrNotRegular for a file
// that is not regular.
func Open(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err // *fs.PathError: names the file
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%s, %w", Kind(fi.Mode()), ErrNotRegular)}
	}
	return f, fi.Size(), nil
}

// Kind names the type of file that mode describes, for messages: "a
// directory", "a character device", "a named pipe (FIFO)" and so on.
func Kind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a regular file"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// Read returns the content of the regular file at path, which may hold at
// most limit bytes: a larger file is refused before it is read, naming its
// size and the limit, and one that grows past the limit while it is read is
// refused too. what names the file's role in the messages ("a config
// file"); Open's refusals apply.
func Read(path string, limit int64, what string) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d bytes %s may take", path, size, limit, what)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: grew past the %d bytes %s may take while it was read", path, limit, what)
	}
	return b, nil
}
