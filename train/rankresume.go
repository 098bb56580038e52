package train

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A rank keeps its recent checkpoints by round, so that after a failure
// every rank can restart from a round all of them have: ranks may be a few
// rounds apart when one is lost (at most the graph's diameter).
const (
	rankCheckpointPrefix = "checkpoint-r"
	rankCheckpointsKept  = 4
)

// RankCheckpointFile returns the name of a rank's checkpoint of round t.
func RankCheckpointFile(t int) string {
	return rankCheckpointPrefix + strconv.Itoa(t) + ".gtck"
}

// keepRankCheckpoint links the checkpoint just written in dir under its
// round's name and removes all but the most recent few.
func keepRankCheckpoint(dir string, round int) error {
	name := filepath.Join(dir, RankCheckpointFile(round))
	os.Remove(name)
	if err := os.Link(filepath.Join(dir, CheckpointFile), name); err != nil {
		return fmt.Errorf("keep checkpoint of round %d: %w", round, err)
	}
	rounds, err := RankCheckpoints(dir)
	if err != nil {
		return err
	}
	for _, t := range rounds[:max(0, len(rounds)-rankCheckpointsKept)] {
		os.Remove(filepath.Join(dir, RankCheckpointFile(t)))
	}
	return nil
}

// RankCheckpoints returns the rounds of the checkpoints a rank keeps in
// dir, increasing.
func RankCheckpoints(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rounds []int
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), rankCheckpointPrefix)
		if n, ok2 := strings.CutSuffix(n, ".gtck"); ok && ok2 {
			if t, err := strconv.Atoi(n); err == nil && t >= 0 && RankCheckpointFile(t) == e.Name() {
				rounds = append(rounds, t)
			}
		}
	}
	slices.Sort(rounds)
	return rounds, nil
}

// CommonRound returns the latest round of which every folder in dirs (one
// per rank) keeps a checkpoint: where a run over several processes resumes.
func CommonRound(dirs []string) (int, error) {
	var common []int
	for k, d := range dirs {
		rounds, err := RankCheckpoints(d)
		if err != nil {
			return 0, fmt.Errorf("rank %d's checkpoints: %w", k, err)
		}
		if k == 0 {
			common = rounds
			continue
		}
		common = slices.DeleteFunc(common, func(t int) bool { return !slices.Contains(rounds, t) })
	}
	if len(common) == 0 {
		return 0, fmt.Errorf("no round of which all %d ranks keep a checkpoint (%s): start the run again", len(dirs), strings.Join(dirs, ", "))
	}
	return common[len(common)-1], nil
}

// ResumeRank restarts rank opt.Rank of a run over several processes from
// its checkpoint of round t in opt.Out, which every rank must resume from
// (see CommonRound), and runs it to its end as RunRank does. The run's
// settings are the checkpoint's.
func ResumeRank(ctx context.Context, t int, opt RankOptions) (*Summary, error) {
	return resumeRank(ctx, t, 0, opt)
}

// resumeRank is ResumeRank to iters rounds in all (0: the checkpoint's
// count), as Resume's iters: every rank must be given the same.
func resumeRank(ctx context.Context, t, iters int, opt RankOptions) (*Summary, error) {
	path := filepath.Join(opt.Out, RankCheckpointFile(t))
	if _, err := os.Stat(path); err != nil {
		return nil, &NoCheckpointError{Dir: opt.Out, Started: true, Err: err}
	}
	unlock, err := lockOut(opt.Out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ck, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	cfg, err := ResumeIters(ck.meta.Config, t, iters)
	if err != nil {
		return nil, err
	}
	if err := opt.check(cfg); err != nil {
		return nil, err
	}
	if err := ck.meta.Placement.check(path, opt.Rank, opt.Owner); err != nil {
		return nil, err
	}
	if err := writeRanksFile(opt, false); err != nil {
		return nil, err
	}
	inputs, err := reopenRun(cfg, ck, path, opt.Options)
	if err != nil {
		return nil, err
	}
	extended := cfg.Iters != ck.meta.Config.Iters
	if extended {
		if err := writeJSON(filepath.Join(opt.Out, ConfigFile), cfg); err != nil {
			return nil, err
		}
	}
	// Every rank measured the same rounds: the evaluation rounds up to t,
	// and the last round of a run that ended; a run resumed to another
	// round count keeps only those a fresh run of that count measures (see
	// keepRows), and writes a checkpoint of the new count at once.
	p := &plan{cfg: cfg, inputs: inputs, ck: ck, ckPath: path, measured: t - t%cfg.EvalEvery, rewrite: extended}
	if t == cfg.Iters && t == ck.meta.Config.Iters {
		p.measured = t
	}
	return executeRank(ctx, p, localOf(opt.Owner, opt.Rank), opt)
}
