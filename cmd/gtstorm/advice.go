package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/experiment"
)

// advise adds to err what the user can do about it, in the command line's
// terms: the libraries return typed errors and never name a command or an
// advice flag.
func advise(err error) error {
	var (
		exists   *train.RunExistsError
		foreign  *train.NotRunFolderError
		inUse    *train.FolderInUseError
		grid     *experiment.GridFolderError
		noCkpt   *train.NoCheckpointError
		stopped  *train.InterruptedError
		memory   *train.MemoryError
		features *data.FeatureCountError
		absent   *data.NotPresentError
		rankRun  *train.RankRunError
	)
	switch {
	case errors.As(err, &rankRun):
		return fmt.Errorf("%w; continue it with %s", err, rankResume(rankRun.Dir))
	case errors.As(err, &exists) && isRankRun(exists.Dir):
		return fmt.Errorf("%w; continue it with %s, or choose another folder, or pass --force to replace it", err, rankResume(exists.Dir))
	case errors.As(err, &exists):
		return fmt.Errorf("%w; continue it with gtstorm resume --out %s, or choose another folder, or pass --force to replace it", err, exists.Dir)
	case errors.As(err, &foreign):
		return fmt.Errorf("%w; choose another folder, or pass --force to run there (its files are kept)", err)
	case errors.As(err, &inUse):
		return fmt.Errorf("%w; wait for it or choose another folder", err)
	case errors.As(err, &grid):
		return fmt.Errorf("%w; choose another folder, or pass --force to run the grid there (runs whose settings match are kept, the others replaced)", err)
	case errors.As(err, &noCkpt) && noCkpt.Started:
		return fmt.Errorf("%w; start it again with gtstorm train, the same flags and --out %s (it takes the folder over)", err, noCkpt.Dir)
	case errors.As(err, &stopped) && stopped.Checkpoint != "":
		return fmt.Errorf("%w (continue with: gtstorm resume --out %s)", err, stopped.Dir)
	case errors.As(err, &stopped):
		return fmt.Errorf("%w; to run it, give the same command again with --out %s (it takes the folder over)", err, stopped.Dir)
	case errors.As(err, &memory) && memory.Given():
		return fmt.Errorf("%w: lower --nodes, --batch or --workers (or the graph's --pc), or raise --max-memory", err)
	case errors.As(err, &memory):
		return fmt.Errorf("%w: lower --nodes, --batch or --workers (or the graph's --pc), or set --max-memory to override the detected limit", err)
	case errors.As(err, &features):
		return fmt.Errorf("%w (if it does, set --features %d or more)", err, features.Features)
	case errors.As(err, &absent):
		return fmt.Errorf("%w; run: gtstorm data fetch %s --data-dir %s", err, absent.Name, absent.Dir)
	}
	return err
}

// isRankRun reports whether dir holds rank 0's part of a run over several
// processes: checkpoints kept by round, which only ranks write.
func isRankRun(dir string) bool {
	rounds, err := train.RankCheckpoints(dir)
	return err == nil && len(rounds) > 0
}

// rankResume returns the command that resumes the run over several
// processes whose run folder is dir: launch's resume where launch wrote
// it (its ranks file and the other ranks' folders are there).
func rankResume(dir string) string {
	_, errRanks := os.Stat(filepath.Join(dir, train.RanksFileName))
	_, errDirs := os.Stat(filepath.Join(dir, train.RanksDir))
	if errRanks == nil && errDirs == nil {
		return "gtstorm launch --resume --out " + dir
	}
	return "gtstorm rank --resume on every rank (or the job submitted again with --resume-or-start)"
}
