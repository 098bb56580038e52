package data

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// unpacker returns how r's downloads are unpacked: r.Unpack, else by its
// format.
func unpacker(r Remote) (func(download, out string, f RemoteFile) error, error) {
	switch {
	case r.Unpack != nil:
		return r.Unpack, nil
	case r.Format == "cifar10":
		return unpackCIFAR, nil
	case r.Format == "libsvm":
		return unpackLibSVM, nil
	}
	return nil, fmt.Errorf("unknown format %q", r.Format)
}

// unpackCIFAR extracts the cifar-10-batches-bin/ members of the gzipped tar
// archive into the new folder out and checks every batch file.
func unpackCIFAR(archive, out string, f RemoteFile) error {
	if err := unpackFolder(archive, out, CIFARDir); err != nil {
		return err
	}
	for _, name := range slices.Concat(cifarTrainFiles, []string{cifarTestFile}) {
		p := filepath.Join(out, name)
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("archive holds no %s/%s", CIFARDir, name)
		}
		if f.Rows > 0 && fi.Size() != int64(f.Rows)*CIFARRecordSize {
			return fmt.Errorf("%s/%s: %d bytes, want %d records of 3073 bytes", CIFARDir, name, fi.Size(), f.Rows)
		}
		if _, err := loadCIFARFiles([]string{p}, name, cifar10Format); err != nil {
			return fmt.Errorf("%s/%s: %w", CIFARDir, name, errors.Unwrap(err))
		}
	}
	return nil
}

// unpackFolder extracts the regular files directly inside folder/ of the
// gzipped tar archive into the new folder out, refusing members that lie
// outside the archive's folder, and reads the archive to its end.
func unpackFolder(archive, out, folder string) error {
	s, err := openSource(archive)
	if err != nil {
		return err
	}
	defer s.Close()
	if !s.compressed || s.gz == nil {
		return errors.New("not a gzip-compressed tar archive")
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(s)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("archive: %w", readErr(err, -1))
		}
		name := path.Clean(h.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("archive member %q lies outside the archive's folder", h.Name)
		}
		dirName, base := path.Split(name)
		if dirName != folder+"/" || h.Typeflag != tar.TypeReg || strings.HasPrefix(base, ".") {
			continue // only regular files directly inside the folder
		}
		if err := writeFileFrom(filepath.Join(out, base), tr, h.Size); err != nil {
			return fmt.Errorf("archive member %s: %w", h.Name, err)
		}
	}
	// Read to the end so that gzip checks its trailer (CRC-32 and length).
	if _, err := io.Copy(io.Discard, io.LimitReader(s, maxUnpacked)); err != nil {
		return fmt.Errorf("archive: %w", readErr(err, -1))
	}
	return nil
}

// unpackLibSVM decompresses (bzip2, gzip) or copies the download into out
// and parses it in full, checking the published sample and feature counts.
func unpackLibSVM(dl, out string, f RemoteFile) error {
	s, err := openSource(dl)
	if err != nil {
		return err
	}
	err = writeFileFrom(out, s, -1)
	s.Close()
	if err != nil {
		return err
	}
	d, err := LoadLibSVM(out, f.Features)
	if err != nil {
		// Drop the "load TEMPORARY-FILE: " prefix; the caller names the URL.
		var fc *FeatureCountError
		if errors.As(err, &fc) {
			bare := *fc
			bare.File = ""
			return fmt.Errorf("not a valid LibSVM file: %w", &bare)
		}
		return fmt.Errorf("not a valid LibSVM file: %w", errors.Unwrap(err))
	}
	if f.Rows > 0 && d.Len() != f.Rows {
		return fmt.Errorf("holds %d samples, the publisher lists %d", d.Len(), f.Rows)
	}
	return nil
}

// writeFileFrom creates path with the bytes of r: exactly size bytes when
// size ≥ 0, else all of r up to maxUnpacked. It syncs the file.
func writeFileFrom(p string, r io.Reader, size int64) error {
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	limit := size
	if limit < 0 || limit > maxUnpacked {
		limit = maxUnpacked
	}
	n, err := io.Copy(out, io.LimitReader(r, limit+1))
	switch {
	case err != nil:
		return readErr(err, n)
	case size >= 0 && n != size:
		return fmt.Errorf("holds %d of its %d bytes", n, size)
	case n > limit:
		return fmt.Errorf("larger than %d bytes", limit)
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}
