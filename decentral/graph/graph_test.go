package graph

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestGenerators(t *testing.T) {
	tests := []struct {
		name      string
		make      func(m int) (*Graph, error)
		m         int
		edges     int
		minDeg    int
		maxDeg    int
		connected bool
	}{
		{"ring1", Ring, 1, 0, 0, 0, true},
		{"ring2", Ring, 2, 1, 1, 1, true},
		{"ring3", Ring, 3, 3, 2, 2, true},
		{"ring10", Ring, 10, 10, 2, 2, true},
		{"path5", Path, 5, 4, 1, 2, true},
		{"complete1", Complete, 1, 0, 0, 0, true},
		{"complete7", Complete, 7, 21, 6, 6, true},
		{"star6", Star, 6, 5, 1, 5, true},
		{"torus12", Torus, 12, 24, 4, 4, true},            // 3 × 4
		{"torus16", Torus, 16, 32, 4, 4, true},            // 4 × 4
		{"torus4", Torus, 4, 4, 2, 2, true},               // 2 × 2: sides of 2 give one edge
		{"torus6", Torus, 6, 9, 3, 3, true},               // 2 × 3
		{"torus7-prime-is-ring", Torus, 7, 7, 2, 2, true}, // 1 × 7
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.make(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if g.N != tc.m || len(g.Edges) != tc.edges {
				t.Fatalf("%d nodes, %d edges, want %d, %d", g.N, len(g.Edges), tc.m, tc.edges)
			}
			lo, hi := g.N, 0
			for i := 0; i < g.N; i++ {
				lo, hi = min(lo, g.Degree(i)), max(hi, g.Degree(i))
			}
			if lo != tc.minDeg || hi != tc.maxDeg || g.MaxDegree() != hi {
				t.Errorf("degrees in [%d, %d] (max %d), want [%d, %d]", lo, hi, g.MaxDegree(), tc.minDeg, tc.maxDeg)
			}
			if g.Connected() != tc.connected {
				t.Errorf("connected = %v", g.Connected())
			}
			checkGraphInvariants(t, g)
		})
	}
	for _, f := range []func(int) (*Graph, error){Ring, Path, Complete, Star, Torus} {
		if _, err := f(0); err == nil {
			t.Error("generator accepted 0 nodes")
		}
	}
}

// checkGraphInvariants checks that edges are sorted, oriented i < j, unique,
// and agree with the neighbour lists.
func checkGraphInvariants(t *testing.T, g *Graph) {
	t.Helper()
	deg := 0
	for k, e := range g.Edges {
		if e[0] >= e[1] || e[0] < 0 || e[1] >= g.N {
			t.Fatalf("edge %v badly oriented or out of range", e)
		}
		if k > 0 && (g.Edges[k-1][0] > e[0] || g.Edges[k-1] == e ||
			(g.Edges[k-1][0] == e[0] && g.Edges[k-1][1] > e[1])) {
			t.Fatalf("edges not sorted and unique at %d: %v %v", k, g.Edges[k-1], e)
		}
		if !g.HasEdge(e[0], e[1]) || !g.HasEdge(e[1], e[0]) {
			t.Fatalf("edge %v missing from neighbour lists", e)
		}
	}
	for i := 0; i < g.N; i++ {
		deg += g.Degree(i)
	}
	if deg != 2*len(g.Edges) {
		t.Fatalf("degree sum %d, want 2|E| = %d", deg, 2*len(g.Edges))
	}
}

func TestTorusShape(t *testing.T) {
	for _, tc := range []struct{ m, rows, cols int }{
		{1, 1, 1}, {2, 1, 2}, {7, 1, 7}, {8, 2, 4}, {9, 3, 3}, {10, 2, 5}, {12, 3, 4}, {100, 10, 10}, {1000, 25, 40},
	} {
		r, c := TorusShape(tc.m)
		if r != tc.rows || c != tc.cols {
			t.Errorf("TorusShape(%d) = %d × %d, want %d × %d", tc.m, r, c, tc.rows, tc.cols)
		}
	}
}

func TestErdosRenyi(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		for _, tc := range []struct {
			m  int
			pc float64
		}{{10, 0.5}, {10, 0.35}, {20, 0.3}, {50, 0.15}, {1, 0.5}, {2, 1}} {
			g, err := ErdosRenyi(tc.m, tc.pc, seed)
			if err != nil {
				t.Fatalf("m=%d pc=%v seed=%d: %v", tc.m, tc.pc, seed, err)
			}
			if !g.Connected() || g.N != tc.m {
				t.Fatalf("m=%d pc=%v seed=%d: %d nodes, connected %v", tc.m, tc.pc, seed, g.N, g.Connected())
			}
			checkGraphInvariants(t, g)
			again, _ := ErdosRenyi(tc.m, tc.pc, seed)
			if !sameEdges(g, again) {
				t.Fatalf("m=%d pc=%v seed=%d: not reproducible", tc.m, tc.pc, seed)
			}
		}
	}
	a, _ := ErdosRenyi(30, 0.3, 1)
	b, _ := ErdosRenyi(30, 0.3, 2)
	if sameEdges(a, b) {
		t.Error("seeds 1 and 2 gave the same graph")
	}
	full, _ := ErdosRenyi(12, 1, 9)
	if len(full.Edges) != 66 {
		t.Errorf("p_c = 1 gave %d edges, want 66", len(full.Edges))
	}
	// Edge density over many seeds is close to p_c.
	total := 0
	for seed := uint64(0); seed < 200; seed++ {
		g, _ := ErdosRenyi(40, 0.5, seed)
		total += len(g.Edges)
	}
	if dens := float64(total) / (200 * 780); dens < 0.49 || dens > 0.51 {
		t.Errorf("mean edge density %.4f, want 0.5 ± 0.01", dens)
	}
}

func sameEdges(a, b *Graph) bool {
	if a.N != b.N || len(a.Edges) != len(b.Edges) {
		return false
	}
	for k := range a.Edges {
		if a.Edges[k] != b.Edges[k] {
			return false
		}
	}
	return true
}

func TestErdosRenyiErrors(t *testing.T) {
	for _, tc := range []struct {
		m    int
		pc   float64
		want string
	}{
		{50, 0.01, "m=50, p_c=0.01"}, // almost surely disconnected: an error, not a hang
		{10, 0, "m=10, p_c=0"},
		{0, 0.5, "0 nodes"},
		{10, 1.5, "p_c = 1.5"},
		{10, -0.1, "p_c = -0.1"},
	} {
		_, err := ErdosRenyi(tc.m, tc.pc, 3)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ErdosRenyi(%d, %v): error %v, want one containing %q", tc.m, tc.pc, err, tc.want)
		}
	}
}

func TestNewGraphErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		edges [][2]int
		want  string
	}{
		{"no nodes", 0, nil, "want at least 1"},
		{"self loop", 3, [][2]int{{1, 1}}, "self loop"},
		{"out of range", 3, [][2]int{{0, 3}}, "outside [0, 3)"},
		{"negative", 3, [][2]int{{-1, 2}}, "outside"},
		{"duplicate", 3, [][2]int{{0, 1}, {1, 0}}, "duplicate edge (0, 1)"},
	} {
		if _, err := New(tc.n, tc.edges); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	g, err := New(4, [][2]int{{0, 1}, {3, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Connected() {
		t.Error("two components reported connected")
	}
	if g.Edges[1] != [2]int{2, 3} {
		t.Errorf("edge (3, 2) stored as %v, want [2 3]", g.Edges[1])
	}
}

func TestParseEdgeList(t *testing.T) {
	good := "# a square with a diagonal\n0 1\n1 2  # trailing comment\n\n  2 3\n3 0\n0 2\n"
	g, err := ParseEdgeList(strings.NewReader(good), "sq.txt")
	if err != nil {
		t.Fatal(err)
	}
	if g.N != 4 || len(g.Edges) != 5 || !g.HasEdge(0, 2) || g.HasEdge(1, 3) {
		t.Fatalf("parsed %d nodes, edges %v", g.N, g.Edges)
	}
	var buf bytes.Buffer
	if err := WriteEdgeList(&buf, g); err != nil {
		t.Fatal(err)
	}
	back, err := ParseEdgeList(&buf, "roundtrip")
	if err != nil || !sameEdges(g, back) {
		t.Fatalf("round trip: %v, %v", err, back)
	}

	for _, tc := range []struct{ name, text, want string }{
		{"one field", "0 1\n2\n", "bad.txt:2:"},
		{"three fields", "0 1\n1 2 3\n", "bad.txt:2:"},
		{"not a number", "0 1\n\n1 x\n", `bad.txt:3: node "x"`},
		{"negative", "0 -1\n", `bad.txt:1: node "-1"`},
		{"float", "0 1.5\n", `bad.txt:1: node "1.5"`},
		{"self loop", "0 1\n2 2\n", "bad.txt:2: self loop on node 2"},
		{"duplicate", "0 1\n1 2\n1 0\n", "bad.txt:3: edge (1, 0) already given on line 1"},
		{"empty", "# nothing\n\n", "bad.txt: no edges"},
	} {
		_, err := ParseEdgeList(strings.NewReader(tc.text), "bad.txt")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestNewTopology(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tri.txt")
	if err := os.WriteFile(file, []byte("0 1\n1 2\n2 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	split := filepath.Join(dir, "split.txt")
	if err := os.WriteFile(split, []byte("0 1\n2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		m     int
		edges int
	}{
		{"er", 10, -1}, {"ring", 10, 10}, {"path", 10, 9}, {"complete", 10, 45}, {"star", 10, 9}, {"torus", 10, 15},
		{file, 3, 3}, {file, 0, 3},
	} {
		g, err := Generate(tc.name, tc.m, 0.5, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !g.Connected() || (tc.edges >= 0 && len(g.Edges) != tc.edges) {
			t.Errorf("%s: %d edges, want %d (connected %v)", tc.name, len(g.Edges), tc.edges, g.Connected())
		}
	}
	for _, tc := range []struct {
		name string
		m    int
		want string
	}{
		{"hypercube", 8, `topology "hypercube": not one of er|ring|path|complete|star|torus`},
		{file, 5, "3 nodes in the file, want 5"},
		{split, 4, "not connected"},
		{"ring", 0, "topology ring: ring: 0 nodes"},
	} {
		if _, err := Generate(tc.name, tc.m, 0.5, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A UTF-8 byte-order mark at the start of a file is skipped; anywhere else
// it is still a malformed node.
func TestParseEdgeListBOM(t *testing.T) {
	for _, text := range []string{"\ufeff0 1\n1 2\n", "\ufeff# nodes: 3\n0 1\n", "\ufeff\n0 1\n1 2\r\n"} {
		g, err := ParseEdgeList(strings.NewReader(text), "bom.txt")
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if g.N != 3 || !g.HasEdge(0, 1) {
			t.Errorf("%q: %d nodes, edges %v", text, g.N, g.Edges)
		}
	}
	if _, err := ParseEdgeList(strings.NewReader("0 1\n\ufeff1 2\n"), "bom.txt"); err == nil ||
		!strings.Contains(err.Error(), "bom.txt:2: node") {
		t.Errorf("a BOM on line 2: error %v", err)
	}
}

// "# nodes: N" declares the node count: a lone node and isolated nodes
// survive a round trip; a declaration the edges contradict is an error.
func TestParseEdgeListNodeCount(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		n, edges   int
	}{
		{"one node", "# nodes: 1\n", 1, 0},
		{"isolated nodes", "# nodes: 5\n0 1\n", 5, 1},
		{"no spaces, after the edges", "0 1\n1 2\n#nodes:3\n", 3, 2},
		{"exact", "# nodes: 2\n1 0\n", 2, 1},
		{"not a count: a comment", "# nodes: many\n0 1\n", 2, 1},
		{"inline: a comment", "0 1 # nodes: 7\n", 2, 1},
		{"old header", "# 3 nodes, 2 edges\n0 1\n1 2\n", 3, 2},
	} {
		g, err := ParseEdgeList(strings.NewReader(tc.text), "n.txt")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if g.N != tc.n || len(g.Edges) != tc.edges {
			t.Errorf("%s: %d nodes, %d edges; want %d, %d", tc.name, g.N, len(g.Edges), tc.n, tc.edges)
		}
	}
	for _, tc := range []struct{ name, text, want string }{
		{"index outside", "# nodes: 2\n0 1\n1 2\n", "n.txt:3: node 2: outside the 2 nodes declared on line 1"},
		{"zero", "# nodes: 0\n", "n.txt:1: node count \"0\": want 1..262144"},
		{"negative", "0 1\n# nodes: -4\n", "n.txt:2: node count \"-4\""},
		{"above the cap", "# nodes: 262145\n", "want 1..262144"},
		{"overflow", "# nodes: 99999999999999999999\n", "want 1..262144"},
		{"twice", "# nodes: 3\n0 1\n# nodes: 3\n", "n.txt:3: node count declared again (first on line 1)"},
	} {
		_, err := ParseEdgeList(strings.NewReader(tc.text), "n.txt")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// Every generator's graph, one node and two included, survives WriteEdgeList
// and ParseEdgeList.
func TestWriteEdgeListRoundTrip(t *testing.T) {
	for _, name := range Generators() {
		for _, m := range []int{1, 2, 3, 6, 12} {
			g, err := Generate(name, m, 0.9, 5)
			if err != nil {
				t.Fatalf("%s %d: %v", name, m, err)
			}
			var buf bytes.Buffer
			if err := WriteEdgeList(&buf, g); err != nil {
				t.Fatal(err)
			}
			back, err := ParseEdgeList(&buf, "rt.txt")
			if err != nil {
				t.Fatalf("%s %d: %v", name, m, err)
			}
			if !sameEdges(g, back) {
				t.Errorf("%s %d: wrote %d nodes %v, read %d nodes %v", name, m, g.N, g.Edges, back.N, back.Edges)
			}
		}
	}
}

// The edge-list node cap is the size the sparse eigensolver handles with its
// full basis, and the error for an index beyond it states the bound.
func TestEdgeListNodeCap(t *testing.T) {
	if MaxEdgeListNodes*8*lanczosMaxBasis > lanczosBasisBytes {
		t.Errorf("MaxEdgeListNodes = %d: a full Lanczos basis takes %d bytes, over the budget of %d",
			MaxEdgeListNodes, MaxEdgeListNodes*8*lanczosMaxBasis, lanczosBasisBytes)
	}
	_, err := ParseEdgeList(strings.NewReader("0 1\n1 262144\n"), "cap.txt")
	want := "cap.txt:2: node 262144: beyond the limit of 262144 nodes (indices 0..262143)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
	g, err := ParseEdgeList(strings.NewReader("# nodes: 262144\n0 262143\n"), "cap.txt")
	if err != nil || g.N != 262144 {
		t.Errorf("largest graph: %v", err)
	}
}

// A huge m·p_c is refused with an error naming both, before anything is
// allocated for it.
func TestErdosRenyiTooLarge(t *testing.T) {
	for _, tc := range []struct {
		m  int
		pc float64
	}{{1_000_000, 0.5}, {20_000, 0.6}, {1 << 40, 1e-6}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ErdosRenyi(tc.m, tc.pc, 1)
		runtime.ReadMemStats(&after)
		want := fmt.Sprintf("G(m=%d, p_c=%g) expects", tc.m, tc.pc)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "above the limit of 1e+08") {
			t.Errorf("ErdosRenyi(%d, %v): error %v, want one containing %q", tc.m, tc.pc, err, want)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("ErdosRenyi(%d, %v): allocated %d bytes", tc.m, tc.pc, grew)
		}
	}
}

// TestReadEdgeListNotRegular: an edge list that is a device is refused in
// one line naming it, not read forever.
func TestReadEdgeListNotRegular(t *testing.T) {
	_, err := ReadEdgeList("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "want a regular file") {
		t.Errorf("ReadEdgeList(/dev/zero): %v, want a refusal naming it", err)
	}
}
