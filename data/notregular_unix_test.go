//go:build unix

package data

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/inputfile"
	"github.com/gtstorm/gtstorm/internal/inputfile/inputfiletest"
)

// TestLoadRefusesNonRegularFiles: a data file or image that is a link to
// /dev/zero (read forever before), a named pipe (whose open waited for a
// writer forever) or a directory is refused in one line naming it, before
// anything is read.
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	zero, fifo := inputfiletest.NotRegular(t, filepath.Join(dir, "zero"), filepath.Join(dir, "fifo"))
	sub := filepath.Join(dir, "folder")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{
		{zero, "a character device"},
		{fifo, "a named pipe (FIFO)"},
		{sub, "a directory"},
	} {
		for _, load := range []struct {
			name string
			run  func(string) error
		}{
			{"LoadLibSVM", func(p string) error { _, err := LoadLibSVM(p, 0); return err }},
			{"ReadImage", func(p string) error { _, err := ReadImage(p); return err }},
		} {
			err := load.run(c.path)
			if err == nil || !strings.Contains(err.Error(), c.path+": "+c.kind+", want a regular file") ||
				strings.Contains(err.Error(), "\n") || !errors.Is(err, inputfile.ErrNotRegular) {
				t.Errorf("%s(%s): %v, want one line naming it as %s", load.name, c.path, err, c.kind)
			}
		}
	}
}
