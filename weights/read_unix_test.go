//go:build unix

package weights

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/inputfile"
	"github.com/gtstorm/gtstorm/internal/inputfile/inputfiletest"
)

// TestReadRefusesWithoutReadingWhole: Read refuses, in one line naming the
// file, paths that are no regular file (a link to /dev/zero, which it used
// to read until memory ran out; a named pipe, whose open used to wait for a
// writer forever; a directory) and files whose header does not fit their
// size, without reading them whole: a sparse file of a terabyte with a bad
// magic, or with a header that announces all of it.
func TestReadRefusesWithoutReadingWhole(t *testing.T) {
	dir := t.TempDir()
	zero, fifo := inputfiletest.NotRegular(t, filepath.Join(dir, "zero.gtck"), filepath.Join(dir, "fifo.gtck"))
	const huge = 1 << 40
	sparse := func(name string, head []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, head, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, huge); err != nil {
			t.Skipf("no sparse file of %d bytes here: %v", int64(huge), err)
		}
		return p
	}
	header := func(bodyLen uint64) []byte {
		b := append([]byte(Magic), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[len(Magic):], Version)
		binary.LittleEndian.PutUint64(b[len(Magic)+4:], bodyLen)
		return b
	}
	badMagic := sparse("text.gtck", []byte("hello, world\n"))
	announced := sparse("announced.gtck", header(huge-uint64(headerSize+trailerSize)))
	claims := filepath.Join(dir, "claims.gtck")
	if err := os.WriteFile(claims, append(header(huge), 0, 0, 0, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		want       []string
	}{
		{"link to /dev/zero", zero, []string{"a character device", "want a regular file"}},
		{"named pipe", fifo, []string{"a named pipe", "want a regular file"}},
		{"directory", dir, []string{"a directory", "want a regular file"}},
		{"terabyte of text", badMagic, []string{"not a gtstorm checkpoint"}},
		{"terabyte announced", announced, []string{"a checkpoint of", "more than the", "this process may use"}},
		{"header claims a terabyte", claims, []string{"truncated", "announces a 1099511627776-byte body"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ck, err := Read(c.path)
			if ck != nil || err == nil {
				t.Fatalf("got a checkpoint, error %v", err)
			}
			wantErr(t, err, append([]string{c.path}, c.want...)...)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			if want := strings.Contains(c.want[len(c.want)-1], "regular"); errors.Is(err, inputfile.ErrNotRegular) != want {
				t.Errorf("errors.Is(%v, inputfile.ErrNotRegular) is %v", err, !want)
			}
		})
	}

	// A checkpoint read through a link is read as usual.
	good := filepath.Join(dir, "good.gtck")
	if err := Write(good, checkpoint(decentral.GTSTORM)); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.gtck")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(link); err != nil {
		t.Fatal(err)
	}
}
