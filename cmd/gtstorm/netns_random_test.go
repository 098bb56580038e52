package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/internal/netlab"
)

// netFault is one event of a random run: at At, rank Rank's link goes
// down for For, or (For = 0) rank Rank's connections with rank Peer are
// reset.
type netFault struct {
	At, For    time.Duration
	Rank, Peer int
}

func (f netFault) String() string {
	if f.For == 0 {
		return fmt.Sprintf("%v: ss -K on rank %d towards rank %d", f.At.Round(time.Millisecond), f.Rank, f.Peer)
	}
	return fmt.Sprintf("%v: rank %d's link down for %v", f.At.Round(time.Millisecond), f.Rank, f.For.Round(time.Millisecond))
}

// randomFaults draws one to three faults of k ranks within the first
// span of a run: link cuts from 0.1 s to twice the peer timeout pt, or
// connection resets.
func randomFaults(rng *rand.Rand, k int, span, pt time.Duration) []netFault {
	fs := make([]netFault, 1+rng.IntN(3))
	for i := range fs {
		f := netFault{At: time.Duration(rng.Int64N(int64(span))), Rank: rng.IntN(k)}
		if rng.IntN(2) == 0 {
			f.For = 100*time.Millisecond + time.Duration(rng.Int64N(int64(2*pt)))
		} else {
			f.Peer = (f.Rank + 1 + rng.IntN(k-1)) % k
		}
		fs[i] = f
	}
	slices.SortFunc(fs, func(a, b netFault) int { return int(a.At - b.At) })
	return fs
}

// inject plays faults from start and returns when the last link is up
// again, with the time it came up; links stay down while any cut of
// theirs lasts.
func inject(lab *netlab.Lab, start time.Time, faults []netFault) (time.Time, []error) {
	type step struct {
		at   time.Duration
		f    netFault
		down bool // a cut's start, else its end
	}
	var steps []step
	for _, f := range faults {
		steps = append(steps, step{f.At, f, true})
		if f.For > 0 {
			steps = append(steps, step{f.At + f.For, f, false})
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return int(a.at - b.at) })
	cuts := make([]int, lab.Ranks())
	var errs []error
	for _, s := range steps {
		time.Sleep(time.Until(start.Add(s.at)))
		var err error
		switch {
		case s.f.For == 0:
			err = lab.KillSockets(s.f.Rank, s.f.Peer)
		case s.down:
			if cuts[s.f.Rank]++; cuts[s.f.Rank] == 1 {
				err = lab.SetLink(s.f.Rank, false)
			}
		default:
			if cuts[s.f.Rank]--; cuts[s.f.Rank] == 0 {
				err = lab.SetLink(s.f.Rank, true)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return time.Now(), errs
}

// envInt returns the integer in environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: want an integer", name, s)
	}
	return n
}

// TestNetnsRandomFaults: runs of three ranks with links cut and
// connections reset at random times each either complete equal to train,
// or stop with every rank checkpointed (every rank within the peer timeout
// plus 5 s of the first) and, resumed, end equal to train; no rank panics
// or hangs. GTSTORM_NETLAB_RUNS sets the number of runs (3),
// GTSTORM_NETLAB_SEED the seed of the first (the time).
func TestNetnsRandomFaults(t *testing.T) {
	const (
		k    = 3
		pt   = 2 * time.Second
		span = 3 * time.Second // faults begin within the run's first span
		hang = pt + 5*time.Second
	)
	runs := envInt(t, "GTSTORM_NETLAB_RUNS", 3)
	seed := envInt(t, "GTSTORM_NETLAB_SEED", 1000)
	dir := t.TempDir()
	n := newLabNet(t, k, dir)
	one := trainReference(t, dir, netnsFlags)
	flags := func(int) []string { return append([]string{"--workers", "1"}, netnsFlags...) }
	var completed, resumed int
	var stops []time.Duration
	for i := range runs {
		s := seed + i
		faults := randomFaults(rand.New(rand.NewPCG(uint64(s), 0)), k, span, pt)
		what := fmt.Sprintf("run %d (GTSTORM_NETLAB_SEED=%d GTSTORM_NETLAB_RUNS=1), faults: %v", i, s, faults)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		out := filepath.Join(dir, fmt.Sprint("run", i))
		run := n.start(t, ctx, out, pt, flags)
		last, errs := inject(n.lab, time.Now(), faults)
		for r := range k {
			n.lab.SetLink(r, true)
		}
		if errs != nil {
			cancel()
			t.Fatalf("%s: %v", what, errs)
		}
		// A run lasts a few seconds; one whose faults ended must have
		// ended by the peer timeout plus 5 s, plus 30 s to finish.
		finished := run.wait(last.Add(hang + 30*time.Second))
		failed := run.failed()
		var diff string
		switch {
		case !finished:
			diff = "ranks still running 30 s past the peer timeout plus 5 s after the last fault (hang)"
		case run.panicked():
			diff = "a rank panicked"
		case len(failed) == 0:
			if diff = equalsTrain(t, run.dirs[0], one); diff == "" {
				completed++
			}
		case run.spread() > hang:
			diff = fmt.Sprintf("ranks %v failed, the last %v after the first; want all within %v", failed, run.spread(), hang)
		case len(failed) < k:
			diff = fmt.Sprintf("ranks %v failed but the others finished", failed)
		default:
			stops = append(stops, run.spread())
			// The resumed run has no faults: a longer peer timeout keeps a
			// busy machine from stopping it.
			if diff = n.resume(t, ctx, out, 10*time.Second, one); diff == "" {
				resumed++
			}
		}
		cancel()
		if diff != "" {
			t.Errorf("%s: %s\n%s", what, diff, run.logs())
			continue
		}
		t.Logf("%s: %s", what, map[bool]string{true: "completed equal to train", false: "stopped, resumed equal to train"}[len(failed) == 0])
		os.RemoveAll(out)
	}
	var spread []string
	for _, d := range stops {
		spread = append(spread, d.Round(10*time.Millisecond).String())
	}
	t.Logf("%d runs from seed %d: %d completed equal to train, %d stopped and resumed equal; ranks stopped within %s of each other",
		runs, seed, completed, resumed, strings.Join(spread, ", "))
}
