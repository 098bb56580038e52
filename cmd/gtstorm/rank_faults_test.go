package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/train"
)

// writeLibSVM writes a small LibSVM training file and its test file (name
// and name.t) into dir, with every label negated if flip, and returns the
// training file's path.
func writeLibSVM(t *testing.T, dir, name string, flip bool) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", ".t"} {
		var b strings.Builder
		for i := range 200 {
			label := 2*(i%2) - 1
			if flip {
				label = -label
			}
			fmt.Fprintf(&b, "%+d", label)
			for k := 1; k <= 20; k += 1 + (i+k)%3 {
				fmt.Fprintf(&b, " %d:%d", k, (i*k)%2)
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name+suffix), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

// TestNodeDataMismatch: a rank given a copy of the data with every label
// flipped (same size, same name) is refused at connect; both ranks exit
// non-zero naming the file and both ranks.
func TestNodeDataMismatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	data := []string{writeLibSVM(t, filepath.Join(dir, "data0"), "a1a", false), writeLibSVM(t, filepath.Join(dir, "data1"), "a1a", true)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmds, logs := startRanks(t, ctx, dir, 2, func(r int) []string {
		return []string{"--dataset", "libsvm", "--data-dir", data[r], "--nodes", "4", "--iters", "4", "--eval-every", "2",
			"--local-eval", "20", "--grad-samples", "10"}
	})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r, c := range cmds {
		wg.Go(func() { errs[r] = c.Wait() })
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the ranks did not stop within 30 s:\n%s\n%s", logs[0], logs[1])
	}
	for r, err := range errs {
		msg := logs[r].String()
		t.Logf("rank %d: %v\n%s", r, err, msg)
		if err == nil {
			t.Errorf("rank %d ran with rank 1's labels flipped:\n%s", r, msg)
			continue
		}
		for _, want := range []string{"input file a1a differs", "rank 0 has " + data[0], "rank 1 has " + data[1]} {
			if !strings.Contains(msg, want) {
				t.Errorf("rank %d's stderr does not say %q:\n%s", r, want, msg)
			}
		}
	}
}

// rankPIDs returns the processes of the ranks of the launch whose run
// folder is out: those whose command line names it.
func rankPIDs(t *testing.T, out string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to find the ranks in")
	}
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte("--launched-run="+out)) && bytes.Contains(b, []byte("\x00rank\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// longRun are the flags of a run that outlasts any of these tests.
var longRun = []string{"--iters", "1000000", "--batch", "16", "--eval-every", "8", "--checkpoint-every", "4", "--local-eval", "200", "--grad-samples", "20"}

// TestSignalWhileWaitingOnDeadPeer: after SIGKILL of rank 1, ranks 0 and
// 2 wait for it (the peer timeout is a minute); SIGTERM stops them within
// seconds, each with a checkpoint and the command that continues the run.
func TestSignalWhileWaitingOnDeadPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmds, logs := startRanks(t, ctx, dir, 3, func(int) []string { return append([]string{"--peer-timeout", "60s"}, longRun...) })
	waitFile(t, ctx, filepath.Join(dir, "rank1", train.RankCheckpointFile(12)))
	cmds[1].Process.Kill()
	cmds[1].Wait() // rank 1 is gone, its sockets closed
	// Ranks 0 and 2 finish what rank 1 sent before it died, then wait for
	// it: every thread of theirs asleep, none runnable, for 20 looks in a row.
	for _, r := range []int{0, 2} {
		for still := 0; still < 20; {
			if asleep(cmds[r].Process.Pid) {
				still++
			} else {
				still = 0
			}
			if ctx.Err() != nil {
				t.Fatalf("rank %d never waited for rank 1:\n%s", r, logs[r])
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	start := time.Now()
	for _, r := range []int{0, 2} {
		cmds[r].Process.Signal(syscall.SIGTERM)
	}
	for _, r := range []int{0, 2} {
		err := cmds[r].Wait()
		took := time.Since(start)
		msg := logs[r].String()
		switch {
		case ctx.Err() != nil:
			t.Errorf("rank %d did not stop within 40 s of SIGTERM:\n%s", r, msg)
		case took > 10*time.Second:
			t.Errorf("rank %d stopped %v after SIGTERM, want a few seconds", r, took)
		case err == nil:
			t.Errorf("rank %d succeeded without rank 1", r)
		case !strings.Contains(msg, "continue with:"):
			t.Errorf("rank %d's stderr names no command that continues the run:\n%s", r, msg)
		case !strings.Contains(msg, "still waiting for peers"):
			t.Errorf("rank %d's stderr does not say the signal came while it waited for its peers:\n%s", r, msg)
		}
	}
}

// asleep reports whether every thread of process pid sleeps: none is
// running, runnable or in uninterruptible (disk) sleep.
func asleep(pid int) bool {
	tasks, err := os.ReadDir(filepath.Join("/proc", fmt.Sprint(pid), "task"))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "task", task.Name(), "stat"))
		if err != nil {
			return false
		}
		if _, after, _ := strings.Cut(string(b), ") "); !strings.HasPrefix(after, "S") {
			return false
		}
	}
	return true
}

// launchRanks starts `gtstorm launch` with args and returns it, its
// combined output, and its ranks' processes once all have started.
func launchRanks(t *testing.T, ctx context.Context, out string, k int, args ...string) (*exec.Cmd, *syncBuffer, []int) {
	t.Helper()
	cmd := gtstorm(t, append([]string{"launch", "--ranks", fmt.Sprint(k), "--insecure", "--out", out}, args...)...)
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, pid := range rankPIDs(t, out) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		cmd.Wait() // once the ranks, which hold its output pipe, are gone
	})
	for {
		if pids := rankPIDs(t, out); len(pids) == k {
			return cmd, &buf, pids
		}
		if ctx.Err() != nil {
			t.Fatalf("launch's %d ranks never all started:\n%s", k, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rankPID returns the process of rank r among pids.
func rankPID(t *testing.T, pids []int, r int) int {
	t.Helper()
	for _, pid := range pids {
		b, _ := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "cmdline"))
		if bytes.Contains(b, []byte(fmt.Sprintf("\x00--rank=%d\x00", r))) {
			return pid
		}
	}
	t.Fatalf("no process of rank %d among %v", r, pids)
	return 0
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "stat"))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}

// TestLaunchKilledRanksExit: SIGKILL of launch stops its ranks within
// seconds, not at the peer timeout or a write to a closed pipe.
func TestLaunchKilledRanksExit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd, buf, pids := launchRanks(t, ctx, out, 2, append([]string{"--peer-timeout", "60s"}, longRun...)...)
	waitFile(t, ctx, filepath.Join(out, train.RankCheckpointFile(8)))
	cmd.Process.Kill()
	cmd.Process.Wait() // not cmd.Wait: the ranks hold its output pipe
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("rank process %d still runs 10 s after launch was killed:\n%s", pid, buf.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestLaunchBlamesFrozenRank: rank 2, stopped (SIGSTOP) longer than the
// peer timeout, is the rank launch names, not rank 0 or 1, which exited
// first after waiting for it; launch's error says how to continue.
func TestLaunchBlamesFrozenRank(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	// Mostly waits: launch kills the frozen rank 12 s (peer timeout + 10 s)
	// after the others stop. Another test runs meanwhile.
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd, buf, pids := launchRanks(t, ctx, out, 3, append([]string{"--peer-timeout", "2s"}, longRun...)...)
	waitFile(t, ctx, filepath.Join(train.RankDir(out, 2), train.RankCheckpointFile(8)))
	frozen := rankPID(t, pids, 2)
	syscall.Kill(frozen, syscall.SIGSTOP)
	err := cmd.Wait()
	msg := buf.String()
	if err == nil {
		t.Fatalf("launch succeeded with rank 2 frozen:\n%s", msg)
	}
	last := msg[strings.LastIndex(strings.TrimSpace(msg), "\n")+1:]
	for _, want := range []string{"rank 2 stopped responding", "continue with: gtstorm launch --resume --out " + out} {
		if !strings.Contains(last, want) {
			t.Errorf("launch's error does not say %q:\n%s", want, last)
		}
	}
	t.Log(last)
}

// TestLaunchRankZeroKilled: when rank 0 is the rank killed, launch's
// error still names the command that continues the run.
func TestLaunchRankZeroKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd, buf, pids := launchRanks(t, ctx, out, 2, append([]string{"--peer-timeout", "2s"}, longRun...)...)
	waitFile(t, ctx, filepath.Join(train.RankDir(out, 1), train.RankCheckpointFile(8)))
	syscall.Kill(rankPID(t, pids, 0), syscall.SIGKILL)
	err := cmd.Wait()
	msg := buf.String()
	last := msg[strings.LastIndex(strings.TrimSpace(msg), "\n")+1:]
	if err == nil || !strings.Contains(last, "rank 0") || !strings.Contains(last, "continue with: gtstorm launch --resume --out "+out) {
		t.Errorf("launch after rank 0 was killed: %v; its last line does not name rank 0 and the command that continues:\n%s", err, msg)
	}
}

// TestLaunchModelIgnoresWorkers: two launched runs that differ only in
// --workers write byte-identical model files: the file holds what the run
// computed, not the machine it ran on.
func TestLaunchModelIgnoresWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	var models [][]byte
	for _, w := range []string{"1", "2"} {
		out := filepath.Join(dir, "workers"+w)
		args := append([]string{"launch", "--ranks", "2", "--insecure", "--workers", w, "--out", out}, smallMNIST...)
		if b, err := gtstorm(t, args...).CombinedOutput(); err != nil {
			t.Fatalf("launch --workers %s: %v\n%s", w, err, b)
		}
		b, err := os.ReadFile(filepath.Join(out, train.ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, b)
	}
	if !bytes.Equal(models[0], models[1]) {
		t.Errorf("%s differs between --workers 1 and 2", train.ModelFile)
	}
}
