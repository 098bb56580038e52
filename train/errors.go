package train

import (
	"errors"
	"fmt"
	"strings"
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

// DuplicateCellsError is a grid two of whose cells have the same settings
// once defaults are filled in and names normalised (choco and choco:none,
// gamma=0 and CHOCO's default γ): the grid would run them twice.
type DuplicateCellsError struct {
	First, Second string // the cells' labels
}

func (e *DuplicateCellsError) Error() string {
	return fmt.Sprintf("cells %s and %s have the same settings: the grid would run them twice", e.First, e.Second)
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

// GridFolderError is an output folder that holds something other than the
// grid about to run there: other files, another grid, or a damaged
// grid.json. RunGrid runs there only when told to.
type GridFolderError struct {
	Dir    string
	Reason string
}

func (e *GridFolderError) Error() string { return e.Dir + " " + e.Reason }
