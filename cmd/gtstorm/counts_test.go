package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster/certs"
)

// countValues are the values every count is fed: near 0, near 2³¹ and near
// 2⁶³ (the last one past int64, which the flag parser refuses).
var countValues = []string{"0", "-1", "2147483647", "2147483648", "9223372036854775807", "-9223372036854775808", "9223372036854775808"}

// countCase is a command whose count is {} in args (or in env), and the
// values it is fed beyond countValues.
type countCase struct {
	args []string
	env  map[string]string
	skip map[string]bool // values that are valid here and would start work
}

// countCases lists every count-like flag and environment variable: nodes,
// ranks, seeds, iters, cells (--vary), tasks, edges, rounds, and those of
// certs and launch. foreign is a folder holding a file of the user's, which
// a run refuses after its checks: a count that passes its checks must not
// cost more than those checks.
func countCases(dir, foreign string) []countCase {
	out := filepath.Join(dir, "out")
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = strconv.Itoa(i + 1)
	}
	v := strings.Join(hundred, ",")
	slurm := map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NODELIST": "h", "SLURM_LOCALID": "0"}
	with := func(base map[string]string, k string) map[string]string {
		m := map[string]string{k: "{}"}
		for key, val := range base {
			if key != k {
				m[key] = val
			}
		}
		return m
	}
	return []countCase{
		{args: []string{"train", "--nodes", "{}", "--out", foreign}},
		{args: []string{"train", "--iters", "{}", "--out", foreign}},
		{args: []string{"train", "--iters", "{}", "--algo", "d2", "--out", foreign}},
		{args: []string{"train", "--iters", "{}", "--topology", "ring", "--aggregate", "trim:1", "--link-drop", "0.2", "--out", foreign}},
		{args: []string{"train", "--iters", "{}", "--topology", "exp", "--aggregate", "trim:0", "--out", foreign}},
		{args: []string{"train", "--byzantine", "{}", "--attack", "signflip", "--out", foreign}},
		{args: []string{"train", "--nodes", "{}", "--topology", "complete", "--out", foreign}},
		{args: []string{"topology", "--nodes", "{}"}},
		{args: []string{"topology", "--nodes", "{}", "--pc", "1"}},
		{args: []string{"topology", "--topology", "complete", "--nodes", "{}"}},
		{args: []string{"topology", "--topology", "ring", "--nodes", "{}"}},
		{args: []string{"topology", "--topology", "torus", "--nodes", "{}"}},
		{args: []string{"topology", "--topology", "exp", "--nodes", "{}"}},
		{args: []string{"topology", "--topology", "exp", "--rounds", "{}"}, skip: map[string]bool{"0": true}},
		{args: []string{"topology", "--link-drop", "0.1", "--rounds", "{}"}, skip: map[string]bool{"0": true}},
		{args: []string{"compare", "--seeds", "{}", "--out", out}},
		{args: []string{"compare", "--iters", "{}", "--algos", "dsgd", "--partitions", "iid", "--out", foreign}},
		{args: []string{"compare", "--nodes", "{}", "--algos", "dsgd", "--partitions", "iid", "--out", out}},
		{args: []string{"compare", "--budget", "samples={}", "--out", foreign}},
		{args: []string{"sweep", "--vary", "rho=1,2", "--seeds", "{}", "--out", out}},
		{args: []string{"sweep", "--vary", "rho=" + v, "--vary", "eta0=" + v, "--vary", "batch=" + v, "--out", out}},
		{args: []string{"sweep", "--vary", "rho=" + v, "--vary", "eta0=" + v, "--seeds", "{}", "--out", out}},
		{args: []string{"certs", "--ranks", "{}", "--out", filepath.Join(dir, "certs")}},
		{args: []string{"launch", "--ranks", "{}", "--out", out}},
		{args: []string{"launch", "--nodes", "{}", "--ranks", "2", "--out", out}},
		{args: []string{"launch", "--nodes", "100000", "--ranks", "{}", "--out", out}},
		{args: []string{"rank", "--out", out}, env: with(slurm, "SLURM_NTASKS")},
		{args: []string{"rank", "--out", out}, env: with(slurm, "SLURM_STEP_NUM_TASKS")},
		{args: []string{"rank", "--out", out}, env: with(slurm, "SLURM_PROCID")},
		{args: []string{"rank", "--out", out}, env: with(slurm, "SLURM_LOCALID"), skip: map[string]bool{"0": true}},
		{args: []string{"rank", "--out", out}, env: with(map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NODELIST": "a,b"}, "SLURM_STEP_TASKS_PER_NODE")},
		{args: []string{"rank", "--out", out}, env: with(map[string]string{"KUBERNETES_SERVICE_HOST": "x"}, "GTSTORM_RANKS")},
		{args: []string{"rank", "--ranks-count", "{}", "--out", out}, env: map[string]string{"KUBERNETES_SERVICE_HOST": "x"}, skip: map[string]bool{"0": true}},
	}
}

// fill returns args with {} replaced by value.
func fill(args []string, value string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{}", value)
	}
	return out
}

// TestCountsRefused: every count-like flag and environment variable, fed
// values near 0, 2³¹ and 2⁶³, ends in exactly one line on stderr and a
// non-zero exit status, having checked what the count implies before
// allocating or writing anything for it (run in process: a count used
// before it is checked ends this test binary in a Go runtime dump or an
// out-of-memory kill). Nothing is written into --out.
func TestCountsRefused(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	for _, c := range countCases(dir, foreign) {
		for _, value := range countValues {
			if c.skip[value] {
				continue
			}
			for k, v := range c.env {
				t.Setenv(k, strings.ReplaceAll(v, "{}", value))
			}
			args := fill(c.args, value)
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			msg := stderr.String()
			if code == 0 || strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
				t.Errorf("gtstorm %s %v: exit %d, stderr %q; want one line and a non-zero exit", strings.Join(args, " "), c.env, code, msg)
			}
			for k := range c.env {
				os.Unsetenv(k)
			}
			if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
				t.Fatalf("gtstorm %s: %s now holds %d files", strings.Join(args, " "), foreign, len(entries))
			}
			for _, p := range []string{"out", "certs"} {
				if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("gtstorm %s: %s was written (%v)", strings.Join(args, " "), p, err)
				}
			}
		}
	}
}

// TestCountsUnderMemoryLimit runs the counts that used to exhaust memory
// (2·10⁹ Slurm tasks, 2·10⁹ seeds, a complete graph of 10⁵ nodes, a grid of
// 10⁶ cells, 2·10⁹ certificates, 5000 launched ranks, 9·10¹⁸ rounds) as the
// command itself under `ulimit -v 4000000`: each ends in one line and a
// non-zero exit. The child is killed if it outlives the test's deadline.
func TestCountsUnderMemoryLimit(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = strconv.Itoa(i + 1)
	}
	v := strings.Join(hundred, ",")
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		env  []string
		want string // in the line
	}{
		{[]string{"rank", "--out", out}, []string{"SLURM_PROCID=0", "SLURM_NTASKS=2000000000", "SLURM_NODELIST=h", "SLURM_STEP_TASKS_PER_NODE=2000000000"}, "SLURM_NTASKS"},
		{[]string{"compare", "--seeds", "2000000000", "--out", out}, nil, "--seeds"},
		{[]string{"topology", "--topology", "complete", "--nodes", "100000"}, nil, "100000 nodes"},
		{[]string{"sweep", "--vary", "rho=" + v, "--vary", "eta0=" + v, "--vary", "batch=" + v, "--out", out}, nil, "1000000 cells"},
		{[]string{"certs", "--ranks", "2000000000", "--out", out}, nil, "--ranks"},
		{[]string{"launch", "--nodes", "100000", "--ranks", "5000", "--out", out}, nil, "--ranks"},
		{[]string{"train", "--iters", "9000000000000000000", "--out", foreign}, nil, "not a run's folder"},
	} {
		cmd := gtstorm(t)
		cmd.Args = append([]string{"sh", "-c", `ulimit -v 4000000 && exec "$0" "$@"`, os.Args[0]}, c.args...)
		cmd.Path, _ = exec.LookPath("sh")
		cmd.Env = append(cmd.Env, c.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		msg := stderr.String()
		if !errors.As(err, &exit) || exit.ExitCode() <= 0 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, c.want) {
			t.Errorf("gtstorm %s under ulimit -v 4000000: %v, stderr %q; want one line with %q and a non-zero exit", strings.Join(c.args, " "), err, msg, c.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("gtstorm %s: %s was written (%v)", strings.Join(c.args, " "), out, err)
		}
	}
}

// TestCertsKilledLeavesNoPartialSet: certs killed while it writes leaves
// no folder of rank pairs without their CA: the set is made in a temporary
// folder beside --out and renamed into place whole.
func TestCertsKilledLeavesNoPartialSet(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "certs")
	cmd := gtstorm(t, "certs", "--ranks", "2000", "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Kill it once some rank keys are written, or let it finish: either
	// way --out must be absent or whole.
	killed := false
	for !killed {
		select {
		case <-done:
			killed = true
			continue
		case <-time.After(5 * time.Millisecond):
		}
		// In --out itself or in a temporary folder beside it.
		keys, _ := filepath.Glob(filepath.Join(parent, "*", "rank-*-key.pem"))
		if len(keys) >= 4 {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			killed = true
		}
	}
	if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
		t.Logf("killed before the set was complete: nothing in --out")
		return
	}
	for _, r := range []int{0, 1999} {
		if _, err := certs.Load(out, r); err != nil {
			t.Errorf("rank %d of %s: %v", r, out, err)
		}
	}
}
