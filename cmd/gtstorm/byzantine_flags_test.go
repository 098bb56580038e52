package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestByzantineBadFlags: every bad Byzantine setting, of a run, a bench or
// a grid, is one line on stderr naming the flag and exit status 2, before
// any work.
func TestByzantineBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Unknown attack or rule.
		{[]string{"train", "--byzantine", "2", "--attack", "flip"}, "--attack flip"},
		{[]string{"train", "--aggregate", "avg"}, "--aggregate avg"},
		{[]string{"train", "--aggregate", "krum"}, "--aggregate krum"},
		{[]string{"train", "--byzantine", "2", "--attack", "labelflip:1"}, "--attack labelflip:1"},
		// B ≥ m, by count or by ids.
		{[]string{"train", "--nodes", "10", "--byzantine", "10", "--attack", "signflip"}, "--byzantine 10"},
		{[]string{"train", "--nodes", "10", "--byzantine", "11", "--attack", "signflip"}, "--byzantine 11"},
		{[]string{"train", "--nodes", "3", "--byzantine", "0,1,2", "--attack", "signflip"}, "--byzantine 0,1,2"},
		{[]string{"train", "--nodes", "10", "--byzantine", "3,10", "--attack", "signflip"}, "--byzantine 3,10"},
		{[]string{"train", "--byzantine", "3,3", "--attack", "signflip"}, "--byzantine 3,3"},
		// B = m − 1 with a trim its neighbourhoods do not allow.
		{[]string{"train", "--nodes", "10", "--byzantine", "9", "--attack", "signflip", "--topology", "ring", "--aggregate", "trim:2"}, "--aggregate trim:2"},
		{[]string{"train", "--nodes", "4", "--byzantine", "3", "--attack", "alie", "--topology", "complete", "--aggregate", "trim:2"}, "--aggregate trim:2"},
		// Negative (or not finite) parameters.
		{[]string{"train", "--byzantine", "-1", "--attack", "signflip"}, "--byzantine -1"},
		{[]string{"train", "--byzantine", "2", "--attack", "signflip:-1"}, "--attack signflip:-1"},
		{[]string{"train", "--byzantine", "2", "--attack", "gauss:-0.5"}, "--attack gauss:-0.5"},
		{[]string{"train", "--byzantine", "2", "--attack", "alie:-2"}, "--attack alie:-2"},
		{[]string{"train", "--byzantine", "2", "--attack", "ipm:-0.1"}, "--attack ipm:-0.1"},
		{[]string{"train", "--byzantine", "2", "--attack", "dissensus:NaN"}, "--attack dissensus:NaN"},
		{[]string{"train", "--byzantine", "2", "--attack", "gauss:Inf"}, "--attack gauss:Inf"},
		{[]string{"train", "--aggregate", "clip:-1"}, "--aggregate clip:-1"},
		{[]string{"train", "--aggregate", "clip:0"}, "--aggregate clip:0"},
		{[]string{"train", "--aggregate", "trim:-1"}, "--aggregate trim:-1"},
		{[]string{"train", "--aggregate", "trim:1.5"}, "--aggregate trim:1.5"},
		// An attack with no Byzantine nodes, Byzantine nodes with no attack.
		{[]string{"train", "--attack", "signflip"}, "--attack signflip"},
		{[]string{"train", "--byzantine", "0", "--attack", "alie"}, "--attack alie"},
		{[]string{"train", "--byzantine", "2"}, "--byzantine 2"},
		// Methods with compressed messages take no attack on them, nor a rule.
		{[]string{"train", "--algo", "choco", "--byzantine", "2", "--attack", "signflip"}, "--attack signflip"},
		{[]string{"train", "--algo", "choco", "--aggregate", "median"}, "--aggregate median"},
		// bench checks the same, and the rule against the graph.
		{[]string{"bench", "--byzantine", "2", "--attack", "flip"}, "--attack flip"},
		{[]string{"bench", "--nodes", "10", "--byzantine", "10", "--attack", "signflip"}, "--byzantine 10"},
		{[]string{"bench", "--topology", "ring", "--aggregate", "trim:2"}, "--aggregate trim:2"},
		// Grids: --vary and the Byzantine settings.
		{[]string{"compare", "--vary", "algo=dsgd,gnsd"}, "--algos dsgd,gnsd"},
		{[]string{"compare", "--vary", "partition=iid"}, "--partitions iid"},
		{[]string{"compare", "--vary", "byzantine=0,2", "--byzantine", "2", "--attack", "signflip"}, "--byzantine"},
		{[]string{"compare", "--vary", "rho=1", "--vary", "rho=2"}, "varied once"},
		{[]string{"compare", "--vary", "attack=none,signflip,none"}, "none is listed twice"},
		{[]string{"compare", "--vary", "dampening=1"}, "--vary dampening"},
		{[]string{"compare", "--vary", "aggregate"}, "--vary aggregate"},
		{[]string{"compare", "--vary", "aggregate=mean,avg"}, "--aggregate avg"},
		{[]string{"compare", "--nodes", "10", "--vary", "byzantine=0,10", "--vary", "attack=signflip"}, "--byzantine 10"},
		{[]string{"compare", "--vary", "byzantine=0,2", "--vary", "attack=flip"}, "--attack flip"},
		{[]string{"compare", "--vary", "byzantine=2", "--vary", "attack=signflip:-1"}, "--attack signflip:-1"},
		{[]string{"compare", "--vary", "byzantine=0,2"}, "--byzantine 2"},
		{[]string{"sweep", "--vary", "aggregate=clip:-1,mean"}, "--aggregate clip:-1"},
		{[]string{"sweep", "--vary", "byzantine=2", "--vary", "aggregate=median", "--vary", "byzantine=3"}, "varied once"},
	} {
		if out := wantRefusedProcess(t, dir, tc.args, tc.want); out != "" {
			t.Errorf("gtstorm %s: printed %q on stdout, want nothing", strings.Join(tc.args, " "), out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("a refused command started a run (runs/ was created)")
	}
}

// TestByzantineAllButOne: B = m − 1 leaves one honest node, which every
// rule its neighbourhood allows runs with (trim:1 on a ring: 3 values);
// the summary measures that node alone.
func TestByzantineAllButOne(t *testing.T) {
	needA8A(t)
	out := filepath.Join(t.TempDir(), "run")
	b, err := gtstorm(t, "train", "--dataset", "libsvm", "--data-dir", a8a, "--batch", "1", "--eta0", "0.1",
		"--nodes", "4", "--topology", "ring", "--byzantine", "3", "--attack", "signflip", "--aggregate", "trim:1",
		"--iters", "20", "--eval-every", "10", "--checkpoint-every", "0", "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("B = m − 1 with trim:1 on a ring: %v\n%s", err, b)
	}
	if s := readSummary(t, out); len(s.Byzantine) != 3 || !strings.Contains(s.Measured, "the 1 honest nodes of 4") {
		t.Errorf("Byzantine %v, measured %q", s.Byzantine, s.Measured)
	}
}

// TestStudyGrid: compare and sweep take --vary again and again; a study's
// clean combinations are one cell per rule, and its table leads with the
// attacks × rules tables of honest accuracy and loss.
func TestStudyGrid(t *testing.T) {
	needA8A(t)
	dir := t.TempDir()
	run := []string{"--dataset", "libsvm", "--data-dir", a8a, "--batch", "1", "--eta0", "0.1", "--nodes", "10",
		"--iters", "20", "--eval-every", "10", "--checkpoint-every", "0"}
	for _, tc := range []struct {
		args  []string
		cells int
		want  []string
	}{
		{append([]string{"compare", "--algos", "dsgd", "--partitions", "iid", "--vary", "byzantine=0,2",
			"--vary", "attack=none,signflip:1,ipm", "--vary", "aggregate=mean,clip"}, run...), 6,
			[]string{"## a8a: byzantine × attack × aggregate\n", "attack × aggregation (dsgd / iid):", "| attack | mean | clip |",
				"| clean |", "| signflip:1, B = 2 |", "| ipm, B = 2 |", "| dsgd / iid / clean / aggregate=clip |"}},
		{append([]string{"sweep", "--algo", "dsgd", "--byzantine", "2", "--attack", "signflip:1",
			"--vary", "topology=ring,er", "--vary", "aggregate=mean,trim:1"}, run...), 4,
			[]string{"effect of topology × aggregate", "attack × aggregation (topology=ring):", "| signflip:1, B = 2 |",
				"| topology=er / aggregate=trim:1 |"}},
	} {
		out := filepath.Join(dir, tc.args[0])
		b, err := gtstorm(t, append(tc.args, "--out", out)...).Output()
		if err != nil {
			t.Fatalf("gtstorm %s: %v\n%s", strings.Join(tc.args, " "), err, b)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: the report lacks %q:\n%s", tc.args[0], w, b)
			}
		}
		cells, _ := filepath.Glob(filepath.Join(out, "*", "seed1"))
		if len(cells) != tc.cells {
			t.Errorf("%s: %d cells ran (%v), want %d", tc.args[0], len(cells), cells, tc.cells)
		}
	}
}

// wantRefusedProcess runs gtstorm with args in a process of its own in
// dir, stopped after 30 s (a command wrongly accepted would start a long
// run), and fails t unless it exits 2 with one line on stderr holding want
// and no panic. It returns what the process printed on stdout.
func wantRefusedProcess(t *testing.T, dir string, args []string, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1")
	cmd.Dir = dir
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	msg := errb.String()
	if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, want) || strings.Contains(msg, "panic:") {
		t.Errorf("gtstorm %s: exit %d (%v), stderr %q; want exit 2 and one line with %q",
			strings.Join(args, " "), code, err, msg, want)
	}
	return outb.String()
}
