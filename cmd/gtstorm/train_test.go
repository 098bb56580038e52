package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/train"
)

// TestMain lets a test run this binary as gtstorm itself: with
// GTSTORM_TEST_MAIN set, the test binary is the command.
func TestMain(m *testing.M) {
	if os.Getenv("GTSTORM_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// gtstorm returns a command that runs this test binary as gtstorm, killed
// when the test ends or 30 s before the test binary's deadline, whichever
// comes first, so that a hung child fails its test instead of the package.
func gtstorm(t *testing.T, args ...string) *exec.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-30*time.Second))
	}
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1")
	return cmd
}

const a8a = "../../testdata/libsvm/a8a"

func needA8A(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(a8a); err != nil {
		t.Fatalf("a8a, the LibSVM file the tests train on, is missing from testdata/libsvm: %v", err)
	}
}

// TestBadFlags runs the binary with every kind of bad setting: each must
// exit with status 2 and one line on stderr naming the flag, before any work.
func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	big := filepath.Join(dir, "big-speeds")
	os.WriteFile(big, bytes.Repeat([]byte("1\n"), 1<<17), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"train", "--nodes", "0"}, "--nodes 0"},
		{[]string{"train", "--nodes", "-3"}, "--nodes -3"},
		{[]string{"train", "--pc", "0"}, "--pc 0"},
		{[]string{"train", "--pc", "1.01"}, "--pc 1.01"},
		{[]string{"train", "--iters", "0"}, "--iters 0"},
		{[]string{"train", "--batch", "0"}, "--batch 0"},
		{[]string{"train", "--eta0", "0"}, "--eta0 0"},
		{[]string{"train", "--eta0", "NaN"}, "--eta0 NaN"},
		{[]string{"train", "--eta0", "+Inf"}, "--eta0 +Inf"},
		{[]string{"train", "--rho", "-1"}, "--rho -1"},
		{[]string{"train", "--dataset", "svhn"}, "--dataset svhn"},
		{[]string{"train", "--algo", "sgd"}, "--algo sgd"},
		{[]string{"train", "--topology", "hypercube"}, "--topology hypercube"},
		{[]string{"train", "--partition", "dirichlet:0"}, "--partition dirichlet:0"},
		{[]string{"train", "--partition", "shards:x"}, "--partition shards:x"},
		{[]string{"train", "--mixing", "max-degree"}, "--mixing max-degree"},
		{[]string{"train", "--eval-every", "0"}, "--eval-every 0"},
		{[]string{"train", "--dataset", "libsvm"}, "--data-dir"},
		{[]string{"train", "--out", filepath.Join(file, "run")}, "--out " + filepath.Join(file, "run")},
		{[]string{"train", "--nodes", "ten"}, "-nodes"},
		{[]string{"train", "--no-such-flag"}, "no-such-flag"},
		{[]string{"train", "extra"}, `unexpected argument "extra"`},
		{[]string{"resume"}, "--out"},
		{[]string{"resume", "--out", dir, "--iters", "-1"}, "--iters -1"},
		{[]string{"train", "--workers", "-1"}, "--workers -1"},
		{[]string{"train", "--local-eval", "-1"}, "--local-eval -1"},
		{[]string{"train", "--grad-samples", "-1"}, "--grad-samples -1"},
		{[]string{"train", "--checkpoint-every", "-1"}, "--checkpoint-every -1"},
		{[]string{"train", "--alpha", "-1"}, "--alpha -1"},
		{[]string{"eval"}, "--checkpoint"},
		{[]string{"compare", "--seeds", "0"}, "--seeds 0"},
		{[]string{"compare", "--algos", ""}, "nothing to run"},
		{[]string{"compare", "--algos", "dsgd,sgd"}, `--algos dsgd,sgd: "sgd" is no algorithm`},
		{[]string{"sweep"}, "--vary"},
		{[]string{"sweep", "--vary", "dampening=1,2"}, "--vary dampening"},
		{[]string{"sweep", "--vary", "rho=a,b"}, "--vary rho=a"},
		{[]string{"bench", "--warm-rounds", "-1"}, "--warm-rounds -1"},
		{[]string{"compare", "--algo", "dsgd"}, "--algos dsgd"},
		{[]string{"compare", "--partition", "iid"}, "--partitions iid"},
		{[]string{"compare", "--algos", "dsgd,gnsd,dsgd"}, "dsgd is listed twice"},
		{[]string{"sweep", "--vary", "rho=1,10,1"}, "1 is listed twice"},
		{[]string{"sweep", "--vary", "rho=1,10", "--rho", "5"}, "--rho"},
		{[]string{"compare", "--seed", "18446744073709551615", "--seeds", "2"}, "wrap"},
		{[]string{"train", "--link-drop", "1"}, "--link-drop 1"},
		{[]string{"train", "--link-drop", "-0.1"}, "--link-drop -0.1"},
		{[]string{"train", "--topology", "exp", "--link-drop", "0.2"}, "--link-drop 0.2"},
		{[]string{"train", "--period", "-1"}, "--period -1"},
		{[]string{"train", "--big-batch", "-5"}, "--big-batch -5"},
		{[]string{"compare", "--budget", "rounds=10"}, "--budget rounds=10"},
		{[]string{"compare", "--budget", "samples=1k", "--iters", "10"}, "--iters"},
		{[]string{"topology", "--topology", "exp", "--nodes", "0"}, "--nodes 0"},
		{[]string{"topology", "--link-drop", "1.5"}, "--link-drop 1.5"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"train", "--target-acc", "0.8", "--target-stat", "0.1"}, "--target-stat 0.1"},
		{[]string{"train", "--speeds", "/dev/zero"}, "--speeds /dev/zero: want a regular file"},
		{[]string{"train", "--speeds", big}, "at most"},
		{[]string{"launch", "--ranks", "2", "--insecure", "--link-latency", "50ms"}, "simulated network"},
		{[]string{"node", "--rank", "0", "--ranks", file, "--insecure", "--compute", "1ms"}, "simulated network"},
		{[]string{"train", "--link-latency", "1e306"}, "--link-latency 1e+306"},
		{[]string{"train", "--link-bandwidth", "1e-320"}, "--link-bandwidth 1e-320"},
		{[]string{"train", "--link-bandwidth", "1e308GB"}, "--link-bandwidth"},
		{[]string{"train", "--compute", "1e308"}, "--compute 1e+308"},
		{[]string{"train", "--stragglers", "1:1e300"}, "--stragglers 1:1e300"},
		{[]string{"compare", "--networks", "1e308/1bit"}, "--link-latency"},
		{[]string{"train", "--algo", "choco", "--topology", "exp"}, "--topology exp"},
		{[]string{"train", "--algo", "choco", "--link-drop", "0.2"}, "--link-drop 0.2"},
		{[]string{"train", "--algo", "dsgd", "--gamma", "0.1"}, "--gamma 0.1"},
		{[]string{"compare", "--algos", "dsgd,gnsd", "--gamma", "0.1"}, "--gamma 0.1"},
		{[]string{"sweep", "--vary", "gamma=0.1,0.2"}, "--gamma 0.1"},
		{[]string{"sweep", "--algo", "choco", "--vary", "gamma=0,0.05"}, "same settings"},
		{[]string{"sweep", "--algo", "choco", "--vary", "compress=topk:0.1,topk:0.10"}, "same settings"},
		{[]string{"compare", "--algos", "choco,choco:none"}, "same settings"},
		{[]string{"compare", "--algos", "choco:qsgd:7,choco:qsgd:07"}, "same settings"},
		{[]string{"compare", "--networks", "0/0"}, "--networks 0/0"},
		{[]string{"node", "--insecure"}, "or run under srun"},
		{[]string{"train", "--algo", "d2", "--mixing", "metropolis", "--link-drop", "0.3", "--iters", "1000"}, "round 124"},
		{[]string{"compare", "--networks", "1ms/1Gbit"}, "--compute"},
		{[]string{"compare", "--budget", "samples=1"}, "samples per node"},
		{[]string{"compare", "--budget", "samples=9223372036854775807"}, "4611686018427387904"},
		// Parse errors: one line too, and no usage on stdout, for every command.
		{[]string{"train", "--gamma", "abc"}, "-gamma"},
		{[]string{"train", "--link-latency", "-1ms"}, "-link-latency"},
		{[]string{"compare", "--link-bandwidth", "10Xbit"}, "-link-bandwidth"},
		{[]string{"sweep", "--no-such-flag"}, "no-such-flag"},
		{[]string{"resume", "--no-such-flag"}, "no-such-flag"},
		{[]string{"eval", "--no-such-flag"}, "no-such-flag"},
		{[]string{"export", "--no-such-flag"}, "no-such-flag"},
		{[]string{"predict", "--top", "abc", "x.png"}, "-top"},
		{[]string{"bench", "--no-such-flag"}, "no-such-flag"},
		{[]string{"topology", "--nodes", "x"}, "-nodes"},
		{[]string{"node", "--no-such-flag"}, "no-such-flag"},
		{[]string{"launch", "--no-such-flag"}, "no-such-flag"},
		{[]string{"certs", "--no-such-flag"}, "no-such-flag"},
		{[]string{"data", "info", "--no-such-flag"}, "no-such-flag"},
	}
	for _, tc := range cases {
		cmd := gtstorm(t, tc.args...)
		cmd.Dir = dir // a run that wrongly started would write runs/ here
		var outb, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &outb, &errb
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		msg := errb.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) || strings.Contains(msg, "panic:") || strings.Contains(msg, "goroutine 1 [") {
			t.Errorf("gtstorm %s: exit %d (%v), stderr %q; want exit 2 and one line with %q",
				strings.Join(tc.args, " "), code, err, msg, tc.want)
		}
		if outb.Len() > 0 {
			t.Errorf("gtstorm %s: printed %d bytes on stdout (the usage?), want none", strings.Join(tc.args, " "), outb.Len())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("a refused command started a run (runs/ was created)")
	}
}

// TestTrainEvalResume drives the binary the way a user does: a run, eval of
// its model, then a run interrupted by SIGINT and resumed, whose summary must
// equal the uninterrupted one's.
func TestTrainEvalResume(t *testing.T) {
	needA8A(t)
	// Computes while the parallel tests that mostly wait
	// (TestLaunchBlamesFrozenRank, TestNodeConfigMismatch) do.
	t.Parallel()
	dir := t.TempDir()
	args := []string{"train", "--dataset", "libsvm", "--data-dir", a8a, "--partition", "iid",
		"--batch", "1", "--eta0", "0.1", "--nodes", "20", "--iters", "20000", "--eval-every", "500",
		"--checkpoint-every", "1000", "--local-eval", "200", "--grad-samples", "20"}

	full := filepath.Join(dir, "full")
	if out, err := gtstorm(t, append(args, "--out", full)...).CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	want := readSummary(t, full)
	out, err := gtstorm(t, "eval", "--checkpoint", filepath.Join(full, train.ModelFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	if acc := fmt.Sprintf("test accuracy %.4f, test loss %.4f", float64(want.FinalTestAcc), float64(want.FinalTestLoss)); !strings.Contains(string(out), acc) {
		t.Errorf("eval says %q, want %q (the run's final accuracy)", out, acc)
	}

	// SIGINT and SIGTERM finish the round, checkpoint and exit; kill -9 loses at most
	// --checkpoint-every rounds. Either way, resume gives the same result.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		cut := filepath.Join(dir, sig.String())
		// Signalled an eighth into the run: 17,500 rounds (about a second of
		// work) before its end.
		log := interruptAt(t, append(args, "--out", cut), "round 2500/", sig)
		if sig != syscall.SIGKILL && !strings.Contains(log, "gtstorm resume --out "+cut) {
			t.Errorf("the interrupted run does not say how to resume:\n%s", log)
		}
		if out, err := gtstorm(t, "resume", "--out", cut).CombinedOutput(); err != nil {
			t.Fatalf("resume after %v: %v\n%s", sig, err, out)
		}
		got := readSummary(t, cut)
		got.Seconds, want.Seconds = 0, 0
		if !reflect.DeepEqual(*got, *want) {
			t.Errorf("summary resumed after %v differs:\n got %+v\nwant %+v", sig, *got, *want)
		}
	}
}

// interruptAt runs gtstorm with args, sends sig once a line of its stderr
// starts with marker, and returns what it printed. The run must not finish.
func interruptAt(t *testing.T, args []string, marker string, sig syscall.Signal) string {
	t.Helper()
	cmd := gtstorm(t, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	signalled := false
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if !signalled && strings.HasPrefix(sc.Text(), marker) {
			cmd.Process.Signal(sig)
			signalled = true
		}
	}
	err = cmd.Wait()
	if !signalled || err == nil {
		t.Fatalf("run interrupted by %v: signalled %v, exit %v\n%s", sig, signalled, err, log.String())
	}
	if _, err := os.Stat(filepath.Join(args[len(args)-1], train.SummaryFile)); err == nil {
		t.Fatalf("the run finished before %v took effect; make it longer\n%s", sig, log.String())
	}
	return log.String()
}

func readSummary(t *testing.T, dir string) *train.Summary {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, train.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := train.ReadSummary(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHelp checks that every command prints its help once, to stdout, and
// exits 0.
func TestHelp(t *testing.T) {
	for _, c := range commands() {
		var out, errb bytes.Buffer
		code := run([]string{c.name, "--help"}, &out, &errb)
		if code != 0 || errb.Len() != 0 || !strings.Contains(out.String(), "Usage: gtstorm "+c.name) {
			t.Errorf("gtstorm %s --help: exit %d, stdout %q, stderr %q", c.name, code, out.String(), errb.String())
		}
		if n := strings.Count(out.String(), "Usage:"); n != 1 && c.name != "data" {
			t.Errorf("gtstorm %s --help prints its usage %d times", c.name, n)
		}
		// compare sets these per cell and refuses them: not offered there.
		for _, hidden := range []string{"  -algo value\n", "  -partition value\n"} {
			if offered := strings.Contains(out.String(), hidden); offered != (c.name == "train") && (c.name == "train" || c.name == "compare") {
				t.Errorf("gtstorm %s --help: offers %q %v", c.name, strings.TrimSpace(hidden), offered)
			}
		}
	}
}
