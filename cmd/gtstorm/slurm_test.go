package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/train"
)

// The tests of this file run ranks under a real Slurm: the single-node
// cluster of deploy/slurm/local-cluster.sh, which .ci/run starts (and sets
// GTSTORM_SLURM=1) where it can. Every task is this test binary run as
// gtstorm; its processes inherit GTSTORM_TEST_MAIN through srun and sbatch.

// needSlurm skips unless a Slurm cluster is up for the tests, and returns
// the environment its commands run with.
func needSlurm(t *testing.T) []string {
	t.Helper()
	if os.Getenv("GTSTORM_SLURM") != "1" {
		t.Skip("no Slurm cluster: start one with deploy/slurm/local-cluster.sh start and set GTSTORM_SLURM=1")
	}
	if _, err := exec.LookPath("srun"); err != nil {
		t.Skipf("GTSTORM_SLURM=1 but no srun: %v", err)
	}
	return append(os.Environ(), "GTSTORM_TEST_MAIN=1")
}

// slurmCmd returns a Slurm command (srun, sbatch, scancel) bound to the
// test's deadline, running this test binary as gtstorm.
func slurmCmd(t *testing.T, env []string, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-30*time.Second))
	}
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	return cmd
}

// Base ports of the tests' ranks: tasks listen on fixed ports under Slurm.
const (
	srunPort   = "29400"
	sbatchPort = "29500"
)

// slurmCerts makes certificates for k ranks on this host's Slurm name.
func slurmCerts(t *testing.T, dir string, k int) string {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(dir, "certs")
	if b, err := gtstorm(t, "certs", "--ranks", strconv.Itoa(k), "--out", certs, "--hosts", strings.Split(host, ".")[0]).CombinedOutput(); err != nil {
		t.Fatalf("certs: %v\n%s", err, b)
	}
	return certs
}

// TestSlurmSrunEqualsTrain: `srun -n 3 gtstorm rank` with no --rank and no
// --ranks (each task places itself from SLURM_PROCID and the step's node
// list) ends with train's model and metrics, bit for bit: the a8a logistic
// regression and a short MNIST run.
func TestSlurmSrunEqualsTrain(t *testing.T) {
	env := needSlurm(t)
	needA8A(t)
	a8aFlags := []string{"--dataset", "libsvm", "--data-dir", a8a, "--batch", "1", "--eta0", "0.1", "--partition", "iid",
		"--iters", "300", "--eval-every", "100", "--checkpoint-every", "100"}
	for name, flags := range map[string][]string{"a8a": a8aFlags, "mnist": smallMNIST} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			one := trainReference(t, dir, flags)
			out := filepath.Join(dir, "srun")
			args := append([]string{"-n", "3", "--overcommit", "--distribution=block", "--kill-on-bad-exit=1", os.Args[0],
				"rank", "--out", out, "--certs", slurmCerts(t, dir, 3), "--base-port", srunPort}, flags...)
			b, err := slurmCmd(t, env, "srun", args...).CombinedOutput()
			if err != nil {
				t.Fatalf("srun: %v\n%s", err, b)
			}
			if !bytes.Contains(b, []byte("from Slurm: SLURM_PROCID=2")) {
				t.Errorf("no start-up line naming Slurm as the source:\n%s", b)
			}
			if rk, err := os.ReadFile(filepath.Join(out, "ranks.txt")); err != nil || strings.Count(string(rk), "# rank ") != 3 {
				t.Errorf("ranks.txt in the run folder: %v\n%s", err, rk)
			}
			sameModel(t, out, one)
			if got, want := metricsWithoutSeconds(t, out), metricsWithoutSeconds(t, one); got != want {
				t.Errorf("metrics\n%s\nwant train's\n%s", got, want)
			}
		})
	}
}

// sbatchArgs are the options that fit deploy/slurm/gtstorm.sbatch to the
// one-node test cluster: three tasks on its two CPUs.
var sbatchArgs = []string{"--nodes=1", "--ntasks=3", "--cpus-per-task=1", "--overcommit"}

// TestSlurmBatchKilledTaskResumes: the job script runs a run to the end,
// equal to train; a task killed with SIGKILL mid-run ends the step with
// every survivor checkpointed, and submitting the script again resumes and
// completes equal to train.
func TestSlurmBatchKilledTaskResumes(t *testing.T) {
	env := needSlurm(t)
	dir := t.TempDir()
	flags := []string{"--iters", "60", "--batch", "16", "--eval-every", "20", "--checkpoint-every", "4", "--local-eval", "200", "--grad-samples", "20"}
	one := trainReference(t, dir, flags)
	script, err := filepath.Abs("../../deploy/slurm/gtstorm.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	submit := func(out string, wait bool) (string, error) {
		e := append(env, "GTSTORM="+os.Args[0], "OUT="+out, "RUN_FLAGS="+strings.Join(flags, " "),
			"BASE_PORT="+sbatchPort, "PEER_TIMEOUT=20s")
		args := append([]string{"--parsable", "--chdir", dir, "--output", filepath.Join(dir, "job-%j.out")}, sbatchArgs...)
		if wait {
			args = append(args, "--wait")
		}
		b, err := slurmCmd(t, e, "sbatch", append(args, script)...).CombinedOutput()
		return strings.TrimSpace(string(b)), err
	}

	// A whole run.
	whole := filepath.Join(dir, "whole")
	if id, err := submit(whole, true); err != nil {
		t.Fatalf("sbatch: %v: %s\n%s", err, id, jobLogs(dir))
	}
	sameModel(t, whole, one)

	// A run whose rank 1 is killed once rank checkpoints exist.
	out := filepath.Join(dir, "killed")
	id, err := submit(out, false)
	if err != nil {
		t.Fatalf("sbatch: %v: %s", err, id)
	}
	t.Cleanup(func() { exec.Command("scancel", id).Run() })
	rank1 := filepath.Join(out, "ranks", "rank-1")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if rounds, _ := train.RankCheckpoints(rank1); len(rounds) > 0 && rounds[len(rounds)-1] >= 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rank 1 wrote no checkpoint of round 8 in 2 minutes\n%s", jobLogs(dir))
		}
		time.Sleep(50 * time.Millisecond)
	}
	pid := rankPid(t, out, 1)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitJob(t, id)
	for r, d := range []string{out, filepath.Join(out, "ranks", "rank-2")} {
		if rounds, _ := train.RankCheckpoints(d); len(rounds) == 0 {
			t.Errorf("survivor %d kept no checkpoint in %s", 2*r, d)
		}
	}
	if _, err := os.Stat(filepath.Join(out, train.ModelFile)); err == nil {
		t.Fatal("the run finished although rank 1 was killed")
	}
	if id, err := submit(out, true); err != nil {
		t.Fatalf("resubmitted sbatch: %v: %s\n%s", err, id, jobLogs(dir))
	}
	sameModel(t, out, one)
	if got, want := metricsWithoutSeconds(t, out), metricsWithoutSeconds(t, one); got != want {
		t.Errorf("resumed metrics\n%s\nwant train's\n%s", got, want)
	}
}

// rankPid finds the process of rank r of the run in out: the test binary
// whose command line names the run folder and whose environment says
// SLURM_PROCID=r.
func rankPid(t *testing.T, out string, r int) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(out)) || !bytes.Contains(cmdline, []byte("\x00rank\x00")) {
			continue
		}
		environ, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(environ, []byte(fmt.Sprintf("\x00SLURM_PROCID=%d\x00", r))) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		return pid
	}
	t.Fatalf("no process of rank %d of %s", r, out)
	return 0
}

// waitJob waits until Slurm no longer lists job id as pending or running.
func waitJob(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		b, _ := exec.Command("squeue", "-h", "-j", id, "-o", "%T").Output()
		if s := strings.TrimSpace(string(b)); s == "" || !strings.Contains("PENDING RUNNING COMPLETING CONFIGURING", s) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("job %s still running after 2 minutes", id)
}

// jobLogs returns the output files of the test's jobs.
func jobLogs(dir string) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(dir, "job-*.out"))
	for _, l := range logs {
		c, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "== %s\n%s", l, c)
	}
	return b.String()
}

// TestSlurmOtherTaskCountRefused: the checkpoints of `srun -n 3` resume
// under 3 tasks only: the job submitted again with 2 or 4 tasks and
// --resume-or-start stops at once with a non-zero exit, naming the 3 ranks
// the checkpoints were written with (where it used to resume with wrong
// numbers, or time out), and the run folder's ranks.txt stays the 3-rank
// file.
func TestSlurmOtherTaskCountRefused(t *testing.T) {
	env := needSlurm(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "srun")
	certs := slurmCerts(t, dir, 4)
	srun := func(n int, extra ...string) ([]byte, error) {
		args := append([]string{"-n", strconv.Itoa(n), "--overcommit", "--distribution=block", os.Args[0],
			"rank", "--out", out, "--certs", certs, "--base-port", srunPort}, smallMNIST...)
		return slurmCmd(t, env, "srun", append(args, extra...)...).CombinedOutput()
	}
	if b, err := srun(3); err != nil {
		t.Fatalf("srun -n 3: %v\n%s", err, b)
	}
	ranks, err := os.ReadFile(filepath.Join(out, "ranks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{2, "of a run over 3 ranks, not 2"},
		{4, "which has no rank 3: submit the job again with 3 tasks"},
	} {
		start := time.Now()
		b, err := srun(tc.n, "--resume-or-start")
		if err == nil || !bytes.Contains(b, []byte(tc.want)) {
			t.Errorf("srun -n %d --resume-or-start: %v, want a refusal naming %q:\n%s", tc.n, err, tc.want, b)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("srun -n %d: refused after %v, want at once", tc.n, d)
		}
		if now, err := os.ReadFile(filepath.Join(out, "ranks.txt")); err != nil || !bytes.Equal(now, ranks) {
			t.Errorf("ranks.txt after srun -n %d was refused: %v\n%s", tc.n, err, now)
		}
	}
}
