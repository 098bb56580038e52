package main

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/gtstorm/gtstorm/train"
)

// rankFates records, for launch, how each rank of a run ended: the ranks
// it said it waited for in vain (see blameLine), the order the ranks
// exited in, and which ones launch had to kill. From them it names the
// rank that stopped the run: the one the others waited for, not merely
// the first to exit.
type rankFates struct {
	mu     sync.Mutex
	blames []int // by rank: the rank it waited for in vain, or -1
	order  []int // the ranks, as they exited
	errs   []error
	kills  bool // launch sent SIGKILL to the ranks still running
	killed []bool
}

func newRankFates(k int) *rankFates {
	f := &rankFates{blames: make([]int, k), errs: make([]error, k), killed: make([]bool, k)}
	for r := range f.blames {
		f.blames[r] = -1
	}
	return f
}

// read looks at a line of rank r's stderr for its blame.
func (f *rankFates) read(r int, line string) {
	if who, b, ok := parseBlame(line); ok && who == r && b >= 0 && b < len(f.blames) {
		f.mu.Lock()
		f.blames[r] = b
		f.mu.Unlock()
	}
}

// exited records that rank r ended with err.
func (f *rankFates) exited(r int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.order = append(f.order, r)
	f.errs[r] = err
	f.killed[r] = f.kills
}

// killing records that launch is about to kill the ranks still running.
func (f *rankFates) killing() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kills = true
}

// culprit returns the rank that stopped the run and the ranks that waited
// for it in vain: the rank most ranks waited for (ties go to a rank launch
// had to kill, then to the earlier to exit); with no such rank, a rank
// killed by a signal launch did not send, else the first rank that failed.
func (f *rankFates) culprit() (int, []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	votes := make([]int, len(f.blames))
	for r, b := range f.blames {
		if b >= 0 && b != r {
			votes[b]++
		}
	}
	best := -1
	for _, r := range f.order {
		switch {
		case votes[r] == 0:
		case best < 0, votes[r] > votes[best], votes[r] == votes[best] && f.killed[r] && !f.killed[best]:
			best = r
		}
	}
	if best < 0 {
		for _, r := range f.order {
			var exit *exec.ExitError
			if errors.As(f.errs[r], &exit) && exit.ExitCode() == -1 && !f.killed[r] {
				best = r // killed by a signal launch did not send
				break
			}
		}
	}
	if best < 0 {
		for _, r := range f.order {
			if f.errs[r] != nil {
				best = r
				break
			}
		}
	}
	var waiters []int
	for r, b := range f.blames {
		if b == best && r != best {
			waiters = append(waiters, r)
		}
	}
	return best, waiters
}

// failure returns launch's error for a failed run whose first failure was
// first: it names the rank that stopped the run and, when every rank keeps
// a checkpoint of a common round, the command that continues the run.
func (f *rankFates) failure(out string, first error) error {
	err := first
	if r, waiters := f.culprit(); r >= 0 && len(waiters) > 0 {
		f.mu.Lock()
		how := "exited"
		if f.killed[r] {
			how = "was killed by launch after it did not stop"
		}
		if f.errs[r] == nil {
			how = "finished"
		}
		f.mu.Unlock()
		err = fmt.Errorf("rank %d stopped responding: %s waited for it in vain; it %s (first failure: %w)", r, ranksList(waiters), how, first)
	} else if r >= 0 {
		f.mu.Lock()
		rerr := f.errs[r]
		f.mu.Unlock()
		err = fmt.Errorf("rank %d failed: %w (its lines above say why)", r, rerr)
	}
	dirs := make([]string, len(f.blames))
	for r := range dirs {
		dirs[r] = train.RankDir(out, r)
	}
	if t, cerr := train.CommonRound(dirs); cerr == nil {
		return fmt.Errorf("%w; every rank keeps a checkpoint of round %d (continue with: gtstorm launch --resume --out %s)", err, t, out)
	}
	return err
}

// ranksList names ranks in words: "rank 1", "ranks 0 and 2", "ranks 0, 1
// and 3".
func ranksList(ranks []int) string {
	ranks = slices.Sorted(slices.Values(ranks))
	s := make([]string, len(ranks))
	for k, r := range ranks {
		s[k] = fmt.Sprint(r)
	}
	if len(s) == 1 {
		return "rank " + s[0]
	}
	return "ranks " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
