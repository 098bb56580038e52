// Package atomicfile writes files so that readers see either the old content
// or the complete new content, never a torn file.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates path, mode 0644, by calling fill on a buffered temporary
// file in the same directory, syncing it and renaming it into place. On any
// error the temporary file is removed and path is left untouched.
func Write(path string, fill func(w io.Writer) error) error {
	return WriteMode(path, 0o644, fill)
}

// WriteMode is Write giving the file mode perm. The temporary file is
// created with mode 0600, so content meant to stay private (a key) is never
// readable by others on the way.
func WriteMode(path string, perm os.FileMode, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = fill(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Chmod(tmp, perm); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteBytes atomically replaces path with b, mode 0644.
func WriteBytes(path string, b []byte) error {
	return WriteBytesMode(path, b, 0o644)
}

// WriteBytesMode atomically replaces path with b, mode perm.
func WriteBytesMode(path string, b []byte, perm os.FileMode) error {
	return WriteMode(path, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
