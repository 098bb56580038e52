package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestKnobAndAttackRefusals: a method knob that does not apply (--period,
// --big-batch, --rho, --gamma) is refused the same way by train and by the
// grids, where no cell's method takes it; a varied attack without
// Byzantine nodes is refused as train's --attack is. Each refusal is one
// line naming the flag, exit status 2, before anything runs.
func TestKnobAndAttackRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--algo", "dsgd", "--period", "50"}, "--period 50: want 0 with --algo dsgd: --period applies to --algo d-get"},
		{[]string{"train", "--algo", "d2", "--big-batch", "10"}, "--big-batch 10: want 0 with --algo d2"},
		{[]string{"train", "--algo", "dsgd", "--rho", "10"}, "--rho 10: want 0 with --algo dsgd: --rho applies to --algo gt-storm"},
		{[]string{"train", "--algo", "gnsd", "--gamma", "0.1"}, "--gamma 0.1: want 0 with --algo gnsd"},
		{[]string{"compare", "--algos", "dsgd,gnsd", "--period", "50"}, "--period 50: want a grid with --algo d-get"},
		{[]string{"compare", "--algos", "dsgd,gnsd", "--gamma", "0.1"}, "--gamma 0.1: want a grid with --algo choco"},
		{[]string{"sweep", "--vary", "algo=dsgd,gnsd", "--gamma", "0.1"}, "--gamma 0.1: want a grid with --algo choco"},
		{[]string{"sweep", "--algo", "dsgd", "--big-batch", "40", "--vary", "nodes=8,10"}, "--big-batch 40"},
		{[]string{"sweep", "--vary", "attack=signflip,gauss"}, "--vary attack=signflip,gauss: want no attack without --byzantine nodes"},
		{[]string{"compare", "--algos", "gt-storm", "--vary", "attack=none,ipm"}, "--vary attack=none,ipm: want no attack without --byzantine nodes (ipm would run clean)"},
		{[]string{"train", "--attack", "none", "--byzantine", "2"}, "--byzantine 2"},
	} {
		wantRefused(t, tc.args, tc.want)
	}
}

// wantRefused runs gtstorm with args and an --out of its own and fails t
// unless it exits 2 with one line on stderr holding want.
func wantRefused(t *testing.T, args []string, want string) {
	t.Helper()
	full := append(append([]string(nil), args...), "--out", filepath.Join(t.TempDir(), "out"))
	var out, errb bytes.Buffer
	code := run(full, &out, &errb)
	msg := errb.String()
	if code != 2 || !strings.Contains(msg, want) || strings.Count(msg, "\n") != 1 {
		t.Errorf("gtstorm %q: exit %d, stderr %q; want exit 2 and one line with %q", args, code, msg, want)
	}
}
