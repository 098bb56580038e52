package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// runSlurmTasks runs n ranks the way srun starts them on one host, as
// runPlaced does for two, and returns each task's exit code and stderr.
func runSlurmTasks(t *testing.T, n int, args []string) ([]int, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	codes, logs := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for r := range n {
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1", fmt.Sprintf("SLURM_PROCID=%d", r), fmt.Sprintf("SLURM_NTASKS=%d", n),
			"SLURM_STEP_NODELIST=127.0.0.1", fmt.Sprintf("SLURM_STEP_TASKS_PER_NODE=%d", n), fmt.Sprintf("SLURM_LOCALID=%d", r))
		var errb bytes.Buffer
		cmd.Stderr = &errb
		wg.Go(func() {
			cmd.Run()
			codes[r], logs[r] = cmd.ProcessState.ExitCode(), errb.String()
		})
	}
	wg.Wait()
	return codes, logs
}

// freePortRun returns a port p such that p to p+n−1 were free a moment
// ago on 127.0.0.1.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		p := freePortPair(t)
		free := true
		for k := 2; k < n && free; k++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+k))
			if free = err == nil; free {
				ln.Close()
			}
		}
		if free {
			return p
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// TestResumeRefusesOtherRankCount: the checkpoints of a run over 3 ranks
// resume over 3 ranks only. A job resubmitted with 2 or 4 tasks, launch's
// resume after its ranks file lost a line, and `gtstorm resume` on the run
// folder each stop at once with a non-zero exit, naming the 3 ranks the
// checkpoints were written with (and, with 4 tasks, the rank that has
// none), instead of resuming with wrong numbers or timing out.
func TestResumeRefusesOtherRankCount(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	base := append([]string{"rank", "--out", out, "--insecure", "--peer-timeout", "20s", "--base-port", fmt.Sprint(freePortRun(t, 4))}, smallMNIST...)
	codes, logs := runSlurmTasks(t, 3, base)
	for r, c := range codes {
		if c != 0 {
			t.Fatalf("the 3-rank run: rank %d exit %d\n%s", r, c, logs[r])
		}
	}
	again := append(append([]string{}, base...), "--resume-or-start")
	for _, tc := range []struct {
		tasks int
		want  []string // by task
	}{
		{2, []string{"of a run over 3 ranks, not 2", "of a run over 3 ranks, not 2"}},
		{4, []string{"over 3 ranks, not 4", "over 3 ranks, not 4", "over 3 ranks, not 4", "which has no rank 3: submit the job again with 3 tasks"}},
	} {
		start := time.Now()
		codes, logs := runSlurmTasks(t, tc.tasks, again)
		for r := range tc.tasks {
			if codes[r] == 0 || !strings.Contains(logs[r], tc.want[r]) {
				t.Errorf("%d tasks: rank %d exit %d, want a refusal naming %q:\n%s", tc.tasks, r, codes[r], tc.want[r], logs[r])
			}
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%d tasks: refused after %v, want at once (not a peer timeout)", tc.tasks, d)
		}
	}

	b, err := gtstorm(t, "resume", "--out", out).CombinedOutput()
	if err == nil || !strings.Contains(string(b), "a run over 3 ranks") || !strings.Contains(string(b), "--resume") {
		t.Errorf("gtstorm resume on a rank run's folder: %v\n%s", err, b)
	}

	ranks := filepath.Join(out, "ranks.txt")
	lines, err := os.ReadFile(ranks)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.SplitAfter(string(lines), "\n")
	if err := os.WriteFile(ranks, []byte(strings.Join(cut[:3], "")), 0o644); err != nil { // the comment and 2 ranks
		t.Fatal(err)
	}
	b, err = gtstorm(t, "launch", "--resume", "--insecure", "--out", out).CombinedOutput()
	if err == nil || !strings.Contains(string(b), "lists 2 ranks, but the run's checkpoints were written by 3 ranks") {
		t.Errorf("launch --resume with 2 of the 3 ranks listed: %v\n%s", err, b)
	}
}

// TestRefusedRankKeepsRanksFile: a rank placed by Slurm that is refused a
// folder (one holding a user's files, or a run of another rank count)
// leaves the folder's ranks.txt as it was.
func TestRefusedRankKeepsRanksFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	user := filepath.Join(dir, "mine")
	if err := os.MkdirAll(user, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := "# my cluster\nhost-a:5000\nhost-b:5000\n"
	for name, text := range map[string]string{"ranks.txt": mine, "notes.txt": "mine"} {
		if err := os.WriteFile(filepath.Join(user, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Only ranks.txt, of 2 ranks, where a 1-rank run would write its own.
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "ranks.txt"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ out, want string }{
		{user, "notes.txt"},
		{other, "lists 2 ranks, this run 1"},
	} {
		args := append([]string{"rank", "--out", tc.out, "--insecure", "--base-port", fmt.Sprint(freePortRun(t, 4))}, smallMNIST...)
		codes, logs := runSlurmTasks(t, 1, args)
		if codes[0] == 0 || !strings.Contains(logs[0], tc.want) {
			t.Errorf("rank into %s: exit %d, want a refusal naming %q:\n%s", tc.out, codes[0], tc.want, logs[0])
		}
		if b, err := os.ReadFile(filepath.Join(tc.out, "ranks.txt")); err != nil || string(b) != mine {
			t.Errorf("%s/ranks.txt after the refusal: %q, %v; want the user's", tc.out, b, err)
		}
	}
}

// TestResumeOrStartComparesInputs: --resume-or-start compares the data by
// content, not by path: the run's own data under another name resumes,
// and other data (the test file in place of the training file, as a typo
// would give) is refused naming both files, where it used to resume
// silently on the run's old files.
func TestResumeOrStartComparesInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	train := writeLibSVM(t, filepath.Join(dir, "data"), "a1a", false)
	flipped := writeLibSVM(t, filepath.Join(dir, "flipped"), "a1a", true)
	renamed := filepath.Join(dir, "copy", "train.svm")
	if err := os.MkdirAll(filepath.Dir(renamed), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", ".t"} {
		b, err := os.ReadFile(train + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(renamed+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "run")
	flags := func(data string) []string {
		return []string{"rank", "--out", out, "--insecure", "--peer-timeout", "20s", "--base-port", fmt.Sprint(freePortRun(t, 2)),
			"--dataset", "libsvm", "--data-dir", data, "--nodes", "4", "--iters", "4", "--eval-every", "2", "--checkpoint-every", "2",
			"--local-eval", "20", "--grad-samples", "10", "--resume-or-start"}
	}
	if codes, logs := runSlurmTasks(t, 2, flags(train)); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("the first run: exit %v\n%s\n%s", codes, logs[0], logs[1])
	}
	codes, logs := runSlurmTasks(t, 2, flags(flipped))
	for r := range 2 {
		if codes[r] == 0 || !strings.Contains(logs[r], "the flags name "+flipped) {
			t.Errorf("--resume-or-start on other data: rank %d exit %d, want a refusal naming %s:\n%s", r, codes[r], flipped, logs[r])
		}
	}
	codes, logs = runSlurmTasks(t, 2, flags(renamed))
	for r := range 2 {
		if codes[r] != 0 || !strings.Contains(logs[r], "resuming from round 4") {
			t.Errorf("--resume-or-start on the same data renamed: rank %d exit %d:\n%s", r, codes[r], logs[r])
		}
	}
}

// TestPlacedRanksNeedOut: under srun without --out every task refuses at
// once, rank 0 too, instead of rank 0 waiting out the peer timeout for a
// rank 1 that refused, and leaving a stray run folder.
func TestPlacedRanksNeedOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	start := time.Now()
	codes, logs := runSlurmTasks(t, 2, append([]string{"rank", "--insecure", "--base-port", fmt.Sprint(freePortRun(t, 2))}, smallMNIST...))
	for r := range 2 {
		if codes[r] != 2 || !strings.Contains(logs[r], "--out: want the run folder") {
			t.Errorf("rank %d without --out: exit %d, want 2 and a refusal naming --out:\n%s", r, codes[r], logs[r])
		}
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("refused after %v, want at once", d)
	}
}

// TestRankEndWithoutTransport: a rank whose transport never started (its
// port taken) prints no empty figures line ("rank 1: ").
func TestRankEndWithoutTransport(t *testing.T) {
	var b bytes.Buffer
	reportRankEnd(&b, 1, "", fmt.Errorf("listen tcp 127.0.0.1:7000: bind: address already in use"))
	if b.Len() != 0 {
		t.Errorf("reportRankEnd without figures wrote %q", b.String())
	}
	reportRankEnd(&b, 1, "network: sent 1.0 MB", nil)
	if b.String() != "rank 1: network: sent 1.0 MB\n" {
		t.Errorf("reportRankEnd with figures wrote %q", b.String())
	}
}
