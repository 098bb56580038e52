package graph

import (
	"fmt"
	"slices"
)

// Graph is an undirected simple graph on nodes 0..N-1. Edges lists every
// edge once as {i, j} with i < j, sorted. Build a Graph with New or one
// of the generators; it is not modified afterwards, so it may be shared.
type Graph struct {
	N     int
	Edges [][2]int

	adj  [][]int // sorted neighbour lists, built by New
	kind string  // the generator that built the graph, "" for New
}

// New returns the graph on n nodes with the given edges, in either
// orientation. It refuses n < 1, indices outside [0, n), self loops and
// duplicate edges. The graph need not be connected (see Connected).
func New(n int, edges [][2]int) (*Graph, error) {
	if n < 1 {
		return nil, fmt.Errorf("graph: %d nodes, want at least 1", n)
	}
	g := &Graph{N: n, Edges: make([][2]int, 0, len(edges)), adj: make([][]int, n)}
	for k, e := range edges {
		i, j := e[0], e[1]
		if i < 0 || i >= n || j < 0 || j >= n {
			return nil, fmt.Errorf("graph: edge %d (%d, %d): node outside [0, %d)", k, i, j, n)
		}
		if i == j {
			return nil, fmt.Errorf("graph: edge %d (%d, %d): self loop", k, i, j)
		}
		if i > j {
			i, j = j, i
		}
		g.Edges = append(g.Edges, [2]int{i, j})
	}
	slices.SortFunc(g.Edges, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	for k := 1; k < len(g.Edges); k++ {
		if g.Edges[k] == g.Edges[k-1] {
			return nil, fmt.Errorf("graph: duplicate edge (%d, %d)", g.Edges[k][0], g.Edges[k][1])
		}
	}
	deg := make([]int, n)
	for _, e := range g.Edges {
		deg[e[0]]++
		deg[e[1]]++
	}
	for i := range g.adj {
		g.adj[i] = make([]int, 0, deg[i])
	}
	for _, e := range g.Edges {
		g.adj[e[0]] = append(g.adj[e[0]], e[1])
		g.adj[e[1]] = append(g.adj[e[1]], e[0])
	}
	for i := range g.adj {
		slices.Sort(g.adj[i])
	}
	return g, nil
}

// Generator returns the name of the generator that built g — "er", "ring",
// "path", "complete", "star" or "torus" — or "" for a graph built by
// New or read from an edge list.
func (g *Graph) Generator() string { return g.kind }

// generated returns New(n, edges) labelled as built by generator kind.
func generated(kind string, n int, edges [][2]int) (*Graph, error) {
	g, err := New(n, edges)
	if err != nil {
		return nil, err
	}
	g.kind = kind
	return g, nil
}

// Neighbors returns node i's neighbours in increasing order. The slice
// belongs to the graph and must not be modified.
func (g *Graph) Neighbors(i int) []int { return g.adj[i] }

// Degree returns the number of neighbours of node i.
func (g *Graph) Degree(i int) int { return len(g.adj[i]) }

// MaxDegree returns the largest node degree.
func (g *Graph) MaxDegree() int {
	d := 0
	for _, a := range g.adj {
		d = max(d, len(a))
	}
	return d
}

// Connected reports whether every node can reach every other.
func (g *Graph) Connected() bool {
	seen := make([]bool, g.N)
	stack := []int{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range g.adj[i] {
			if !seen[j] {
				seen[j] = true
				count++
				stack = append(stack, j)
			}
		}
	}
	return count == g.N
}

// HasEdge reports whether i and j are neighbours.
func (g *Graph) HasEdge(i, j int) bool {
	_, found := slices.BinarySearch(g.adj[i], j)
	return found
}

// check reports an error unless g was built by New.
func (g *Graph) check() error {
	if g == nil || g.N < 1 || len(g.adj) != g.N {
		return fmt.Errorf("graph not built by New or a generator")
	}
	return nil
}
