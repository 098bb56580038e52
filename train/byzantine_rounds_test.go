package train

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// TestCheckedRounds: the checks before round 1 visit one matrix of a static
// graph and one period of exp, whatever --iters is, and a bounded number
// of rounds of a graph whose links fail, saying that it is bounded.
func TestCheckedRounds(t *testing.T) {
	ring, err := graph.Ring(6)
	if err != nil {
		t.Fatal(err)
	}
	w, err := graph.NewMixing(graph.MixMetropolis, ring)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := graph.OnePeerExponential(16)
	if err != nil {
		t.Fatal(err)
	}
	drop, err := graph.NewLinkDrop(ring, graph.MixMetropolis, 0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		topo    graph.Topology
		iters   int
		rounds  int
		partial bool
	}{
		{"static", graph.Static{W: w}, math.MaxInt, 1, false},
		{"static, 0 rounds", graph.Static{W: w}, 0, 1, false},
		{"exp", exp, math.MaxInt, 4, false},
		{"exp, 2 rounds", exp, 2, 2, false},
		{"link drop", drop, math.MaxInt, maxCheckedRounds, true},
		{"link drop, 2^31 rounds", drop, 1 << 31, maxCheckedRounds, true},
		{"link drop, 50 rounds", drop, 50, 50, false},
	} {
		if rounds, partial := checkedRounds(c.topo, c.iters); rounds != c.rounds || partial != c.partial {
			t.Errorf("%s, --iters %d: %d rounds (partial %v), want %d (%v)", c.name, c.iters, rounds, partial, c.rounds, c.partial)
		}
	}
}

// TestHugeItersChecked: --iters near 2⁶³ costs the checks before round 1
// no more than a few rounds (they used to visit every round, spinning for
// good): a static graph under mean, trim and D² passes or fails at once,
// and a trim rule on failing links is refused naming the first round whose
// graph it cannot use.
func TestHugeItersChecked(t *testing.T) {
	for _, c := range []struct {
		algo, topo, agg, byz, attack string
		linkDrop                     float64
		want                         string // "" for no error
	}{
		{"dsgd", "er", "", "", "", 0, ""},
		{"dsgd", "ring", "trim:1", "", "", 0, ""},
		{"dsgd", "ring", "trim:2", "", "", 0, "node 0"},
		{"d2", "er", "", "", "", 0, ""},
		{"dsgd", "exp", "trim:0", "", "", 0, ""},
		{"dsgd", "ring", "trim:1", "", "", 0.3, "round "},
		{"dsgd", "er", "", "2", "alie", 0.1, ""},
	} {
		for _, iters := range []int{1 << 31, math.MaxInt} {
			cfg := lrConfig(c.algo)
			cfg.Nodes, cfg.Topology, cfg.Aggregate, cfg.LinkDrop, cfg.Iters = 10, c.topo, c.agg, c.linkDrop, iters
			cfg.Byzantine, cfg.Attack = c.byz, c.attack
			err := cfg.CheckGraphs()
			if err == nil {
				err = cfg.CheckPlacement(make([]int, cfg.Nodes))
			}
			var ce *ConfigError
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%+v, --iters %d: %v", c, iters, err)
			case c.want != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%+v, --iters %d: %v, want a setting's error with %q", c, iters, err, c.want)
			}
		}
	}
}
