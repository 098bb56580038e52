package graph

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// FuzzParseEdgeList feeds arbitrary text to ParseEdgeList: it must return an
// error or a valid graph (1 ≤ N ≤ MaxEdgeListNodes, every edge {i, j} with
// 0 ≤ i < j < N, sorted without duplicates, node N−1 on some edge unless a
// "# nodes: N" line declares the count) that survives a WriteEdgeList round
// trip, and never panic. Seed corpus:
// testdata/fuzz/FuzzParseEdgeList; run `go test -fuzz=FuzzParseEdgeList
// ./decentral/graph/` to explore.
func FuzzParseEdgeList(f *testing.F) {
	f.Add([]byte("0 1\n1 2\n2 0\n"))
	f.Add([]byte("# comment\n\n 3\t0 # trailing\n0 2\r\n"))
	f.Add([]byte("0 1000000000\n"))
	f.Add([]byte("0 1\n1 0\n"))
	f.Add([]byte("\ufeff0 1\n"))
	f.Add([]byte("# nodes: 4\n0 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseEdgeList(bytes.NewReader(b), "fuzz.txt")
		if err != nil {
			if g != nil {
				t.Fatal("a graph came back with the error")
			}
			if !strings.HasPrefix(err.Error(), "fuzz.txt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkGraph(t, g)
		if !hasNode(g, g.N-1) && !bytes.Contains(b, []byte(nodesDirective)) {
			t.Fatalf("%d nodes but no edge reaches node %d: %v", g.N, g.N-1, g.Edges)
		}
		var buf bytes.Buffer
		if err := WriteEdgeList(&buf, g); err != nil {
			t.Fatal(err)
		}
		back, err := ParseEdgeList(&buf, "again")
		if err != nil {
			t.Fatalf("written graph does not parse: %v", err)
		}
		if back.N != g.N || !sameEdges(g, back) {
			t.Fatalf("round trip changed %d nodes %v into %d nodes %v", g.N, g.Edges, back.N, back.Edges)
		}
	})
}

// checkGraph fails t unless g is a simple graph in Graph's documented form.
func checkGraph(t *testing.T, g *Graph) {
	t.Helper()
	if g.N < 1 || g.N > MaxEdgeListNodes {
		t.Fatalf("%d nodes, want 1..%d", g.N, MaxEdgeListNodes)
	}
	deg := 0
	for k, e := range g.Edges {
		if e[0] < 0 || e[0] >= e[1] || e[1] >= g.N {
			t.Fatalf("edge %d %v: want 0 ≤ i < j < %d", k, e, g.N)
		}
		if k > 0 {
			p := g.Edges[k-1]
			if p[0] > e[0] || p[0] == e[0] && p[1] >= e[1] {
				t.Fatalf("edges %d %v and %d %v out of order or repeated", k-1, p, k, e)
			}
		}
		if !g.HasEdge(e[0], e[1]) || !g.HasEdge(e[1], e[0]) {
			t.Fatalf("edge %v missing from the neighbour lists", e)
		}
	}
	for i := range g.N {
		deg += g.Degree(i)
	}
	if deg != 2*len(g.Edges) {
		t.Fatalf("degrees sum to %d, want 2 × %d edges", deg, len(g.Edges))
	}
}

func hasNode(g *Graph, n int) bool {
	for _, e := range g.Edges {
		if e[0] == n || e[1] == n {
			return true
		}
	}
	return false
}

// A huge node index is refused with the file and line, before anything is
// allocated for it; the largest allowed index is accepted.
func TestParseEdgeListHugeIndex(t *testing.T) {
	for _, text := range []string{
		"0 1\n0 1000000000\n",
		fmt.Sprintf("0 1\n%d 2\n", MaxEdgeListNodes),
		"0 1\n1 9223372036854775807\n",
		"0 1\n1 99999999999999999999999\n",
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		g, err := ParseEdgeList(strings.NewReader(text), "big.txt")
		runtime.ReadMemStats(&after)
		if err == nil || g != nil || !strings.Contains(err.Error(), "big.txt:2: node") {
			t.Errorf("%q: got %v, %v; want an error naming big.txt:2", text, g, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%q: allocated %d bytes", text, grew)
		}
	}
	g, err := ParseEdgeList(strings.NewReader(fmt.Sprintf("0 %d\n", MaxEdgeListNodes-1)), "max.txt")
	if err != nil || g.N != MaxEdgeListNodes {
		t.Fatalf("largest index: %v, %v", g, err)
	}
}
