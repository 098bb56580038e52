//go:build unix

package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/inputfile/inputfiletest"
)

// TestRead reads a regular file and a link to one, and refuses, in one line
// naming the path, a link to /dev/zero, a named pipe with no writer (without
// waiting for one), a directory, a missing file and a file over the limit.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.json")
	if err := os.WriteFile(file, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	zero, fifo := inputfiletest.NotRegular(t, filepath.Join(dir, "zero.json"), filepath.Join(dir, "fifo.json"))
	cases := []struct {
		name, path string
		limit      int64
		want       []string // substrings of the error; nil for success
		notRegular bool
	}{
		{"regular file", file, 100, nil, false},
		{"exactly the limit", file, 8, nil, false},
		{"link to a regular file", link, 100, nil, false},
		{"link to /dev/zero", zero, 100, []string{zero, "a character device", "want a regular file"}, true},
		{"named pipe", fifo, 100, []string{fifo, "a named pipe", "want a regular file"}, true},
		{"directory", dir, 100, []string{dir, "a directory", "want a regular file"}, true},
		{"missing", filepath.Join(dir, "none.json"), 100, []string{"none.json"}, false},
		{"over the limit", file, 7, []string{file, "8 bytes, more than the 7 bytes a config file may take"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Read(c.path, c.limit, "a config file")
			if c.want == nil {
				if err != nil || string(b) != `{"a": 1}` {
					t.Fatalf("got %q, %v", b, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %d bytes, want an error", len(b))
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error of several lines: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if errors.Is(err, ErrNotRegular) != c.notRegular {
				t.Errorf("errors.Is(%v, ErrNotRegular) = %v, want %v", err, !c.notRegular, c.notRegular)
			}
		})
	}
}

// TestKind names each type of file.
func TestKind(t *testing.T) {
	for mode, want := range map[fs.FileMode]string{
		0:                                 "a regular file",
		fs.ModeDir:                        "a directory",
		fs.ModeNamedPipe:                  "a named pipe (FIFO)",
		fs.ModeSocket:                     "a socket",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a block device",
	} {
		if got := Kind(mode); got != want {
			t.Errorf("Kind(%v) = %q, want %q", mode, got, want)
		}
	}
}
