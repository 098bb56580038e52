package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the file that marks an output folder as in use by a run.
const LockFile = ".lock"

// lockOut creates out if needed and takes its lock, so that two runs never
// write into one folder at once. A lock left by a process that no longer
// exists is taken over. Creating the lock also proves, before any work, that
// out can be written. The returned function releases the lock.
func lockOut(out string) (unlock func(), err error) {
	if out == "" {
		return nil, &ConfigError{"out", `""`, "an output folder"}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, &ConfigError{"out", out, fmt.Sprintf("a folder that can be created and written (%v)", err)}
	}
	path := filepath.Join(out, LockFile)
	for range 2 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := fmt.Fprintf(f, "%d\n", os.Getpid())
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return nil, &ConfigError{"out", out, fmt.Sprintf("a folder that can be written (%v)", werr)}
			}
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, &ConfigError{"out", out, fmt.Sprintf("a folder that can be written (%v)", err)}
		}
		if pid, alive := lockOwner(path); alive {
			return nil, fmt.Errorf("--out %s is in use by process %d (lock file %s); wait for it or choose another folder", out, pid, path)
		}
		os.Remove(path) // stale: its process is gone
	}
	return nil, fmt.Errorf("--out %s: could not take the lock %s", out, path)
}

// lockOwner returns the process id written in a lock file and whether that
// process is still running.
func lockOwner(path string) (pid int, alive bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if pid == os.Getpid() {
		return pid, true
	}
	err = syscall.Kill(pid, 0)
	return pid, err == nil || errors.Is(err, syscall.EPERM)
}
