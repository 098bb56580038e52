package train

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrInterrupted is wrapped by the error of a run or grid that stopped
// because its context was cancelled (a signal). See InterruptedError.
var ErrInterrupted = errors.New("interrupted")

// InterruptedError is a run stopped by its context. After its first round
// the round in progress was finished and a checkpoint written, so the run
// can be resumed; before it (while loading or initialising) there is no
// checkpoint and the run is to be started again.
type InterruptedError struct {
	Dir        string // the run's folder
	Round      int    // rounds done
	Checkpoint string // the checkpoint written; "" before the first round
}

func (e *InterruptedError) Error() string {
	if e.Checkpoint == "" {
		return fmt.Sprintf("interrupted before the first round of the run in %s, with no checkpoint yet", e.Dir)
	}
	return fmt.Sprintf("interrupted after round %d; a checkpoint is in %s", e.Round, e.Checkpoint)
}

// Unwrap makes errors.Is(err, ErrInterrupted) hold.
func (e *InterruptedError) Unwrap() error { return ErrInterrupted }

// RunExistsError is a folder that already holds a run (a checkpoint, a
// model or a summary), which Train does not replace unless told to.
type RunExistsError struct {
	Dir  string
	File string // the file that shows it
}

func (e *RunExistsError) Error() string {
	return fmt.Sprintf("%s already holds a run (%s)", e.Dir, e.File)
}

// NotRunFolderError is a folder a run would write into that holds files a
// run does not write.
type NotRunFolderError struct {
	Dir   string
	Names []string // what it holds, in name order
}

func (e *NotRunFolderError) Error() string {
	names := e.Names
	if len(names) > 4 {
		names = append(names[:4:4], "…")
	}
	return fmt.Sprintf("%s is not a run's folder (it holds %s)", e.Dir, strings.Join(names, ", "))
}

// NoCheckpointError is a folder Resume cannot continue. Started says that
// a run was started there (config.json is present) but stopped before its
// first checkpoint: it is to be started again, which takes the folder over.
type NoCheckpointError struct {
	Dir     string
	Started bool
	Err     error // why the checkpoint could not be found
}

func (e *NoCheckpointError) Error() string {
	if e.Started {
		return fmt.Sprintf("%s: the run was stopped before its first checkpoint, so there is nothing to resume", e.Dir)
	}
	return fmt.Sprintf("%s: no checkpoint to resume from (%v)", e.Dir, e.Err)
}

func (e *NoCheckpointError) Unwrap() error { return e.Err }

// FolderInUseError is an output folder locked by another process.
type FolderInUseError struct {
	Dir  string
	PID  int // the holder, 0 if unknown
	Lock string
}

func (e *FolderInUseError) Error() string {
	owner := "another process"
	if e.PID > 0 {
		owner = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("%s is in use by %s (lock %s)", e.Dir, owner, e.Lock)
}

// LockFile is the file that marks an output folder as in use by a run.
const LockFile = ".lock"

// lockOut creates out if needed and takes its lock, so that two runs never
// write into one folder at once. The lock is a kernel lock (flock) on the
// lock file: it is held by an open file, so the kernel releases it when the
// process ends however it ends (a crash, kill -9, an out-of-memory kill),
// and no pid is ever trusted. The file holds the owner's pid only to name it
// in the message another run gets; the owner removes it on release. Taking the lock also
// proves, before any work, that out can be written, and clears temporary
// files that a killed run left there. The returned function releases the
// lock, and only this lock.
func lockOut(out string) (unlock func(), err error) {
	if out == "" {
		return nil, &ConfigError{"out", `""`, "an output folder"}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, &ConfigError{"out", out, fmt.Sprintf("a folder that can be created and written (%v)", err)}
	}
	path := filepath.Join(out, LockFile)
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, &ConfigError{"out", out, fmt.Sprintf("a folder that can be written (%v)", err)}
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &FolderInUseError{Dir: out, PID: lockPid(path), Lock: path}
			}
			return nil, fmt.Errorf("%s: lock %s: %w", out, path, err)
		}
		// The holder before us may have removed the file between our open
		// and our flock: then we hold a lock on a file nobody else sees.
		if !sameFile(f, path) {
			f.Close()
			continue
		}
		// The lock is ours: record our pid for the message others get.
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		removeTemps(out)
		return func() {
			os.Remove(path) // still ours: nobody can lock it while we hold it
			f.Close()
		}, nil
	}
	return nil, fmt.Errorf("%s: could not take the lock %s (it keeps being replaced)", out, path)
}

// LockOut takes the lock of out as a run does (see lockOut), for work
// that writes there besides runs: a grid's own files.
func LockOut(out string) (unlock func(), err error) { return lockOut(out) }

// sameFile reports whether the open file f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// lockPid returns the process id written in a lock file, or 0.
func lockPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// removeTemps deletes the temporary files (".NAME.tmp…", see atomicfile)
// that a process killed while writing left in dir. It must only be called
// by the holder of dir's lock.
func removeTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if isTemp(e) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// RemoveTemps deletes the temporary files left in out and in the run
// folders below it (two levels, as a grid lays them out). The command line
// calls it when a second signal ends the process at once.
func RemoveTemps(out string) {
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(out, path); strings.Count(rel, string(filepath.Separator)) >= 2 {
				return filepath.SkipDir
			}
			return nil
		}
		if isTemp(d) {
			os.Remove(path)
		}
		return nil
	})
}

func isTemp(e fs.DirEntry) bool {
	n := e.Name()
	return !e.IsDir() && strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp")
}
