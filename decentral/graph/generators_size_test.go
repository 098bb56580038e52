package graph

import (
	"math"
	"strings"
	"testing"
)

// TestGeneratorsRefuseSizes: every generated graph refuses a node count
// out of 1..MaxNodes, and the complete graph one whose edges pass
// MaxErdosRenyiEdges, in one line before it allocates anything (complete
// used to make its edge slice first).
func TestGeneratorsRefuseSizes(t *testing.T) {
	gens := map[string]func(int) (*Graph, error){
		"ring": Ring, "path": Path, "complete": Complete, "star": Star, "torus": Torus,
		"er": func(m int) (*Graph, error) { return ErdosRenyi(m, 1e-12, 1) },
	}
	for name, gen := range gens {
		for _, m := range []int{0, -1, MaxNodes + 1, 1<<31 - 1, 1 << 31, math.MaxInt, math.MinInt} {
			g, err := gen(m)
			if err == nil || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s(%d) = %v, %v; want a one-line error", name, m, g, err)
			}
		}
	}
	for _, m := range []int{100_000, 14_143} {
		if _, err := Complete(m); err == nil || !strings.Contains(err.Error(), "edges, above the limit") {
			t.Errorf("Complete(%d): %v, want the edge limit", m, err)
		}
	}
	if g, err := Generate("complete", 5, 0, 1); err != nil || len(g.Edges) != 10 {
		t.Errorf("complete on 5 nodes: %v, %v", g, err)
	}
}
