package main

// Runs over real network stacks (#22): each rank in a network namespace of
// its own, joined to the others through a bridge (internal/netlab), talking
// mutual TLS over 10.77.0.0/24. The tests need root and the ip command and
// skip saying so elsewhere. GTSTORM_NETLAB_RUNS sets the number of runs of
// TestNetnsRandomFaults (default 3), GTSTORM_NETLAB_SEED its seed, and
// GTSTORM_NETLAB_LONG=1 turns on the long tests (TestNetnsPacedRounds).

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/internal/netlab"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// labPort is the port every rank listens on, each at its own address.
const labPort = "7000"

// newNetlab returns a lab of k rank namespaces, removed when the test ends,
// or skips the test saying why it cannot make one.
func newNetlab(t *testing.T, k int) *netlab.Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("starts rank processes in network namespaces; run without -short")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("no network namespaces: %v", err)
	}
	lab, err := netlab.New(k)
	if err != nil {
		t.Skipf("no network namespaces: %v", err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Error(err)
		}
	})
	return lab
}

// netnsFlags are the run flags of the namespace tests: 24 rounds of
// batches of 16, checkpoints every 4.
var netnsFlags = []string{"--iters", "24", "--batch", "16", "--eval-every", "8", "--checkpoint-every", "4", "--local-eval", "200", "--grad-samples", "20"}

// labNet is a lab with the ranks file of its addresses and certificates
// naming them.
type labNet struct {
	lab          *netlab.Lab
	ranks, certs string
}

// newLabNet makes a lab of k ranks (see newNetlab) and writes its ranks
// file and certificates into dir.
func newLabNet(t *testing.T, k int, dir string) *labNet {
	t.Helper()
	n := &labNet{lab: newNetlab(t, k)}
	var addrs, hosts []string
	for r := range k {
		addrs = append(addrs, n.lab.Addr(r)+":"+labPort)
		hosts = append(hosts, n.lab.Addr(r))
	}
	n.ranks = filepath.Join(dir, "ranks.txt")
	if err := os.WriteFile(n.ranks, []byte(strings.Join(addrs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n.certs = filepath.Join(dir, "certs")
	args := []string{"certs", "--ranks", fmt.Sprint(k), "--out", n.certs, "--hosts", strings.Join(hosts, ",")}
	if b, err := gtstorm(t, args...).CombinedOutput(); err != nil {
		t.Fatalf("certs: %v\n%s", err, b)
	}
	return n
}

// labRank is a `gtstorm rank` process in a lab namespace.
type labRank struct {
	cmd  *exec.Cmd
	log  bytes.Buffer  // stderr and stdout; read it once done is closed
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done is closed
	exit time.Time     // when it exited
}

// labRanks is one run's rank processes and their folders.
type labRanks struct {
	ranks []*labRank
	dirs  []string
}

// start starts `gtstorm rank` in each of the lab's namespaces with the
// peer timeout pt, folder dir/rankR and the flags args(r), and kills them
// when the test ends.
func (n *labNet) start(t *testing.T, ctx context.Context, dir string, pt time.Duration, args func(r int) []string) *labRanks {
	t.Helper()
	run := &labRanks{}
	for r := range n.lab.Ranks() {
		out := filepath.Join(dir, fmt.Sprint("rank", r))
		a := append([]string{"rank", "--rank", fmt.Sprint(r), "--ranks", n.ranks, "--certs", n.certs,
			"--peer-timeout", pt.String(), "--out", out}, args(r)...)
		p := &labRank{cmd: n.lab.Command(ctx, r, os.Args[0], a...), done: make(chan struct{})}
		p.cmd.Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1")
		p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
		p.cmd.WaitDelay = 5 * time.Second
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		go func() {
			p.err = p.cmd.Wait()
			p.exit = time.Now()
			close(p.done)
		}()
		t.Cleanup(func() {
			p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		})
		run.ranks = append(run.ranks, p)
		run.dirs = append(run.dirs, out)
	}
	return run
}

// wait waits for every rank until deadline and returns whether all
// exited; a rank still running then is killed.
func (run *labRanks) wait(deadline time.Time) bool {
	all := true
	for _, p := range run.ranks {
		select {
		case <-p.done:
		case <-time.After(time.Until(deadline)):
			all = false
			p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
	}
	return all
}

// failed returns the ranks that exited with an error.
func (run *labRanks) failed() []int {
	var rs []int
	for r, p := range run.ranks {
		if p.err != nil {
			rs = append(rs, r)
		}
	}
	return rs
}

// spread returns the time from the first rank's exit to the last's.
func (run *labRanks) spread() time.Duration {
	first, last := run.ranks[0].exit, run.ranks[0].exit
	for _, p := range run.ranks {
		first, last = minTime(first, p.exit), maxTime(last, p.exit)
	}
	return last.Sub(first)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// logs returns every rank's output, for a failure message.
func (run *labRanks) logs() string {
	var b strings.Builder
	for r, p := range run.ranks {
		fmt.Fprintf(&b, "--- rank %d (%v):\n%s", r, p.err, p.log.String())
	}
	return b.String()
}

// panicked returns whether a rank's output shows a panic or a data race.
func (run *labRanks) panicked() bool {
	for _, p := range run.ranks {
		if s := p.log.String(); strings.Contains(s, "panic:") || strings.Contains(s, "DATA RACE") {
			return true
		}
	}
	return false
}

// equalsTrain reports how rank 0's finished run differs from the train
// run in one: "" if it has its model, bit for bit, and metrics.
func equalsTrain(t *testing.T, rank0, one string) string {
	t.Helper()
	ma, err := weights.Read(filepath.Join(rank0, train.ModelFile))
	if err != nil {
		return err.Error()
	}
	mb, err := weights.Read(filepath.Join(one, train.ModelFile))
	if err != nil {
		return err.Error()
	}
	if len(ma.Params) != len(mb.Params) {
		return fmt.Sprintf("%d parameters, train has %d", len(ma.Params), len(mb.Params))
	}
	for j := range ma.Params {
		if math.Float32bits(ma.Params[j]) != math.Float32bits(mb.Params[j]) {
			return fmt.Sprintf("parameter %d: %v, train has %v", j, ma.Params[j], mb.Params[j])
		}
	}
	got := strings.Split(metricsWithoutSeconds(t, rank0), "\n")
	want := strings.Split(metricsWithoutSeconds(t, one), "\n")
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			return fmt.Sprintf("metrics.csv has %d lines, train's %d; line %d is\n%q, train's\n%q",
				len(got), len(want), i+1, line(got, i), line(want, i))
		}
	}
	return ""
}

// line returns lines[i], or "" past the end.
func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// waitRound waits until rank r's folder holds its checkpoint of round t,
// or ctx ends.
func waitRound(ctx context.Context, dir string, t int) bool {
	for {
		if _, err := os.Stat(filepath.Join(dir, train.RankCheckpointFile(t))); err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// resume starts every rank of a stopped run in dir again with --resume,
// and reports "" if all finish, saying they resume from the latest round
// all kept, with train's model and metrics (one); else what went wrong.
func (n *labNet) resume(t *testing.T, ctx context.Context, dir string, pt time.Duration, one string) string {
	t.Helper()
	var dirs []string
	for r := range n.lab.Ranks() {
		dirs = append(dirs, filepath.Join(dir, fmt.Sprint("rank", r)))
	}
	round, err := train.CommonRound(dirs)
	if err != nil {
		// A run stopped before every rank kept its round-0 checkpoint (it
		// stopped while the ranks connected or gathered round 0) has
		// nothing to resume: as its advice says, it starts again.
		if !someRankKeptNone(dirs) {
			return fmt.Sprintf("no round every rank kept, though every rank kept one: %v", err)
		}
		return n.startAgain(t, ctx, dir, pt, one)
	}
	run := n.start(t, ctx, dir, pt, func(int) []string { return []string{"--resume"} })
	if diff := run.ended("resumed"); diff != "" {
		return diff
	}
	for r, p := range run.ranks {
		if want := fmt.Sprintf("resuming from round %d", round); !strings.Contains(p.log.String(), want) {
			return fmt.Sprintf("resumed rank %d does not say %q:\n%s", r, want, run.logs())
		}
	}
	return equalsTrain(t, run.dirs[0], one)
}

// someRankKeptNone reports whether a rank folder of dirs holds no rank
// checkpoint at all.
func someRankKeptNone(dirs []string) bool {
	for _, d := range dirs {
		if rounds, _ := train.RankCheckpoints(d); len(rounds) == 0 {
			return true
		}
	}
	return false
}

// startAgain starts every rank of a run in dir again from round 0 with
// the run flags and --force, and reports "" if they end with train's model
// and metrics (one); else what went wrong.
func (n *labNet) startAgain(t *testing.T, ctx context.Context, dir string, pt time.Duration, one string) string {
	t.Helper()
	run := n.start(t, ctx, dir, pt, func(int) []string { return append([]string{"--force", "--workers", "1"}, netnsFlags...) })
	if diff := run.ended("started again"); diff != "" {
		return diff
	}
	return equalsTrain(t, run.dirs[0], one)
}

// ended waits up to 90 s for ranks started after a stop (how says how)
// and reports "" if every one finished, else what went wrong.
func (run *labRanks) ended(how string) string {
	switch {
	case !run.wait(time.Now().Add(90 * time.Second)):
		return fmt.Sprintf("the ranks %s did not finish within 90 s:\n%s", how, run.logs())
	case len(run.failed()) > 0:
		return fmt.Sprintf("ranks %v %s failed:\n%s", run.failed(), how, run.logs())
	case run.panicked():
		return fmt.Sprintf("a rank %s panicked:\n%s", how, run.logs())
	}
	return ""
}

// TestNetnsLinkCuts: three ranks in three network namespaces, over mutual
// TLS through a bridge, end with train's model and metrics; also when rank
// 1's link is cut for a quarter of the peer timeout mid-run, and when every
// connection between the ranks is reset (ss -K) mid-run. Cut for
// longer than the peer timeout, every rank checkpoints and stops within
// the peer timeout plus 5 s, and all resumed end equal to train.
func TestNetnsLinkCuts(t *testing.T) {
	dir := t.TempDir()
	n := newLabNet(t, 3, dir)
	one := trainReference(t, dir, netnsFlags)
	flags := func(int) []string { return append([]string{"--workers", "1"}, netnsFlags...) }
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("none", func(t *testing.T) {
		out := filepath.Join(dir, "none")
		run := n.start(t, ctx, out, 10*time.Second, flags)
		if !run.wait(time.Now().Add(60*time.Second)) || len(run.failed()) > 0 {
			t.Fatalf("ranks in namespaces:\n%s", run.logs())
		}
		if diff := equalsTrain(t, run.dirs[0], one); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("short", func(t *testing.T) {
		const pt = 8 * time.Second
		out := filepath.Join(dir, "short")
		run := n.start(t, ctx, out, pt, flags)
		if !waitRound(ctx, run.dirs[1], 8) {
			t.Fatalf("rank 1 never checkpointed round 8:\n%s", run.logs())
		}
		cutFor(t, n.lab, 1, pt/4)
		if !run.wait(time.Now().Add(60*time.Second)) || len(run.failed()) > 0 {
			t.Fatalf("ranks after a cut of %v:\n%s", pt/4, run.logs())
		}
		if diff := equalsTrain(t, run.dirs[0], one); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("reset", func(t *testing.T) {
		out := filepath.Join(dir, "reset")
		run := n.start(t, ctx, out, 8*time.Second, flags)
		if !waitRound(ctx, run.dirs[1], 4) {
			t.Fatalf("rank 1 never checkpointed round 4:\n%s", run.logs())
		}
		for r := range 3 {
			for p := r + 1; p < 3; p++ {
				if err := n.lab.KillSockets(r, p); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !run.wait(time.Now().Add(60*time.Second)) || len(run.failed()) > 0 {
			t.Fatalf("ranks after their connections were reset:\n%s", run.logs())
		}
		if diff := equalsTrain(t, run.dirs[0], one); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("long", func(t *testing.T) {
		const pt = 2 * time.Second
		out := filepath.Join(dir, "long")
		run := n.start(t, ctx, out, pt, flags)
		if !waitRound(ctx, run.dirs[1], 8) {
			t.Fatalf("rank 1 never checkpointed round 8:\n%s", run.logs())
		}
		if err := n.lab.SetLink(1, false); err != nil {
			t.Fatal(err)
		}
		cut := time.Now()
		stopped := run.wait(cut.Add(pt + 5*time.Second))
		if err := n.lab.SetLink(1, true); err != nil {
			t.Fatal(err)
		}
		if !stopped {
			t.Fatalf("ranks still ran %v after rank 1's link was cut:\n%s", pt+5*time.Second, run.logs())
		}
		if f := run.failed(); len(f) != 3 || run.panicked() {
			t.Fatalf("ranks %v failed after rank 1's link was cut, want all three, without a panic:\n%s", f, run.logs())
		}
		t.Logf("all ranks stopped %v after the cut", time.Since(cut).Round(time.Millisecond))
		if diff := n.resume(t, ctx, out, pt, one); diff != "" {
			t.Error(diff)
		}
	})
}

// cutFor takes rank r's link down for d, then up again.
func cutFor(t *testing.T, lab *netlab.Lab, r int, d time.Duration) {
	t.Helper()
	if err := lab.SetLink(r, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	if err := lab.SetLink(r, true); err != nil {
		t.Fatal(err)
	}
}
