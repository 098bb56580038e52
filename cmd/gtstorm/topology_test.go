package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

func TestTopologyCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"topology", "--topology", "ring", "--nodes", "4"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := []string{
		"0 1\n0 3\n1 2\n2 3\n",
		"# 0.666667 0.166667 0.000000 0.166667\n",
		"# lambda = max(|lambda_2|, |lambda_m|) = 0.666667\n",
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}

	// The output is an edge-list file: feeding it back gives the same graph.
	out.Reset()
	if code := run([]string{"topology", "--nodes", "12", "--pc", "0.4", "--seed", "7", "--mixing", "metropolis"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	file := filepath.Join(t.TempDir(), "g.txt")
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if code := run([]string{"topology", "--topology", file, "--mixing", "metropolis"}, &again, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	edges := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "# gtstorm") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if edges(out.String()) != edges(again.String()) {
		t.Errorf("round trip through %s changed the graph:\n%s\nvs\n%s", file, out.String(), again.String())
	}

	// Large graphs print W by rows.
	out.Reset()
	if code := run([]string{"topology", "--topology", "torus", "--nodes", "40"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "# row 39: 39=") {
		t.Errorf("torus 40: no sparse rows:\n%s", out.String())
	}
}

func TestTopologyCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--nodes", "0"}, 2, "--nodes 0"},
		{[]string{"--pc", "1.5"}, 2, "--pc 1.5"},
		{[]string{"--mixing", "uniform"}, 2, `--mixing "uniform"`},
		{[]string{"--topology", "no-such-file"}, 2, `--topology "no-such-file"`},
		{[]string{"--nodes", "50", "--pc", "0.01"}, 1, "G(m=50, p_c=0.01) was not connected"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"topology"}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}

// Every generator's printed edge list, on one node and two included, parses
// back to the same graph, and `gtstorm topology` reads its own output.
func TestTopologyOutputParses(t *testing.T) {
	dir := t.TempDir()
	for _, name := range graph.Generators() {
		for _, m := range []int{1, 2, 3, 5, 12, 40} {
			args := []string{"topology", "--topology", name, "--nodes", strconv.Itoa(m), "--pc", "0.9", "--seed", "3"}
			var out, errb bytes.Buffer
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errb.String())
			}
			want, err := graph.Generate(name, m, 0.9, 3)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graph.ParseEdgeList(bytes.NewReader(out.Bytes()), "out")
			if err != nil {
				t.Fatalf("%s %d: output does not parse: %v\n%s", name, m, err, out.String())
			}
			if got.N != want.N || !slices.Equal(got.Edges, want.Edges) {
				t.Errorf("%s %d: read back %d nodes %v, want %d nodes %v", name, m, got.N, got.Edges, want.N, want.Edges)
			}
			file := filepath.Join(dir, fmt.Sprintf("%s%d.txt", name, m))
			if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var again bytes.Buffer
			if code := run([]string{"topology", "--topology", file}, &again, &errb); code != 0 {
				t.Fatalf("%s: exit %d: %s", file, code, errb.String())
			}
			if !strings.Contains(again.String(), fmt.Sprintf("# nodes: %d\n", m)) {
				t.Errorf("%s: reading it back lost the node count:\n%s", file, again.String())
			}
		}
	}
}

// TestTopologyLinkDrop: each round printed names its failed edges, which
// with the surviving ones make up the base graph, and shows W_t, whose
// zero weights are exactly the failed edges and the non-edges.
func TestTopologyLinkDrop(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"topology", "--topology", "ring", "--nodes", "5", "--link-drop", "0.4", "--rounds", "3", "--mixing", "metropolis"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(out.String(), "\n")
	rounds := 0
	for i, line := range lines {
		var r, alive, total int
		if n, _ := fmt.Sscanf(line, "# round %d: %d of %d edges survive", &r, &alive, &total); n != 3 {
			continue
		}
		rounds++
		_, rest, _ := strings.Cut(line, "failed: ")
		rest, _, _ = strings.Cut(rest, ";")
		failed := map[[2]int]bool{}
		if rest != "none" {
			for _, f := range strings.Fields(rest) {
				var a, b int
				fmt.Sscanf(f, "%d-%d", &a, &b)
				failed[[2]int{a, b}] = true
			}
		}
		if total != 5 || alive+len(failed) != total {
			t.Errorf("round %d: %d alive + %d failed of %d", r, alive, len(failed), total)
		}
		for a := range 5 { // W_t's rows follow the round's line
			fields := strings.Fields(strings.TrimPrefix(lines[i+1+a], "#"))
			for _, b := range []int{(a + 1) % 5, (a + 4) % 5} {
				e := [2]int{min(a, b), max(a, b)}
				if zero := fields[b] == "0.000000"; zero != failed[e] {
					t.Errorf("round %d: W[%d][%d] = %s, edge failed %v", r, a, b, fields[b], failed[e])
				}
			}
		}
	}
	if rounds != 3 {
		t.Errorf("%d rounds printed, want 3:\n%s", rounds, out.String())
	}
}
