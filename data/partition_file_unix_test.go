//go:build unix

package data

import (
	"path/filepath"
	"testing"

	"github.com/gtstorm/gtstorm/internal/inputfile/inputfiletest"
)

// TestPartitionFileNotRegular refuses a partition file that is a link to
// /dev/zero or a named pipe before reading it.
func TestPartitionFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	zero, fifo := inputfiletest.NotRegular(t, filepath.Join(dir, "zero"), filepath.Join(dir, "fifo"))
	d := labelsOnly(2, []uint8{0, 1})
	for _, c := range []struct{ path, kind string }{{zero, "a character device"}, {fifo, "a named pipe (FIFO)"}} {
		_, err := PartitionFile(d, 2, c.path)
		wantErr(t, err, c.path, c.kind, "want a regular file")
	}
}
