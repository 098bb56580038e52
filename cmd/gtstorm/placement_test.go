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

	"github.com/gtstorm/gtstorm/train"
)

// freePortPair returns a port p such that p and p+1 were free a moment
// ago on 127.0.0.1.
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		a, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := a.Addr().(*net.TCPAddr).Port
		b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		a.Close()
		if err == nil {
			b.Close()
			return p
		}
	}
	t.Fatal("no two consecutive free ports")
	return 0
}

// runPlaced runs two ranks the way srun starts them on one host: the same
// command line, and Slurm's variables in each task's environment. It
// returns each rank's exit code and stderr.
func runPlaced(t *testing.T, args []string) ([2]int, [2]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		codes [2]int
		logs  [2]string
		wg    sync.WaitGroup
	)
	for r := range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1", fmt.Sprintf("SLURM_PROCID=%d", r), "SLURM_NTASKS=2",
			"SLURM_STEP_NODELIST=127.0.0.1", "SLURM_STEP_TASKS_PER_NODE=2", fmt.Sprintf("SLURM_LOCALID=%d", r))
		var errb bytes.Buffer
		cmd.Stderr = &errb
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd.Run()
			codes[r], logs[r] = cmd.ProcessState.ExitCode(), errb.String()
		}()
	}
	wg.Wait()
	return codes, logs
}

// TestNodePlacedFromSlurmEnvironment: two ranks given one command line
// and Slurm's environment (no --rank, no --ranks) place themselves, write
// the ranks file they derived into the run folder, keep rank 1's part
// under ranks/rank-1, and end with train's model. --resume-or-start with
// the same flags resumes the finished run; with other flags it is refused,
// naming the setting.
func TestNodePlacedFromSlurmEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	one := trainReference(t, dir, smallMNIST)
	out := filepath.Join(dir, "run")
	base := []string{"rank", "--out", out, "--insecure", "--peer-timeout", "20s", "--base-port", fmt.Sprint(freePortPair(t))}
	codes, logs := runPlaced(t, append(base, smallMNIST...))
	if codes != [2]int{0, 0} {
		t.Fatalf("exit codes %v\nrank 0:\n%s\nrank 1:\n%s", codes, logs[0], logs[1])
	}
	if !strings.Contains(logs[1], "rank 1 of 2 from Slurm: SLURM_PROCID=1") || !strings.Contains(logs[1], filepath.Join(out, "ranks.txt")) {
		t.Errorf("rank 1 does not say where its place came from:\n%s", logs[1])
	}
	if b, err := os.ReadFile(filepath.Join(out, "ranks.txt")); err != nil || strings.Count(string(b), "127.0.0.1:") != 2 {
		t.Errorf("ranks.txt: %v\n%s", err, b)
	}
	if rounds, err := train.RankCheckpoints(filepath.Join(out, "ranks", "rank-1")); err != nil || len(rounds) == 0 {
		t.Errorf("rank 1's checkpoints under ranks/rank-1: %v, %v", rounds, err)
	}
	sameModel(t, out, one)

	longer := append(append([]string{}, base...), smallMNIST...)
	longer = append(longer, "--resume-or-start", "--iters", "24")
	codes, logs = runPlaced(t, longer)
	if codes != [2]int{2, 2} || !strings.Contains(logs[0], "iters 12 there, 24 here") {
		t.Errorf("--resume-or-start with other settings: exit %v\n%s", codes, logs[0])
	}
	codes, logs = runPlaced(t, append(append(append([]string{}, base...), smallMNIST...), "--resume-or-start"))
	if codes != [2]int{0, 0} || !strings.Contains(logs[0], "resuming from round 12") {
		t.Errorf("--resume-or-start with the run's settings: exit %v\n%s", codes, logs[0])
	}
	sameModel(t, out, one)
}
