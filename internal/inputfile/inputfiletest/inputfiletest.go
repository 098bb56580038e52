//go:build unix

// Package inputfiletest makes, for the tests of every reader of a user's
// files, the two paths that are not regular files and that a reader must
// refuse before it reads: a link to /dev/zero, which never ends, and a
// named pipe, whose open waits for a writer.
package inputfiletest

import (
	"os"
	"syscall"
	"testing"
)

// NotRegular makes zero a symbolic link to /dev/zero and fifo a named
// pipe, failing t if either cannot be made, and returns them.
func NotRegular(t testing.TB, zero, fifo string) (string, string) {
	t.Helper()
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	return zero, fifo
}
