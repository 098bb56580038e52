package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// ErdosRenyiTries bounds how many graphs ErdosRenyi draws before it gives up
// on finding a connected one.
const ErdosRenyiTries = 1000

// MaxErdosRenyiEdges bounds the expected edge count p_c·m(m−1)/2 that
// ErdosRenyi accepts: each edge costs about 100 bytes across the edge list,
// the neighbour lists and a mixing matrix, so 10⁸ edges already take ~10 GB.
const MaxErdosRenyiEdges = 100_000_000

// MaxNodes bounds the node count of a generated graph, as
// MaxEdgeListNodes bounds a file's: the largest graph whose mixing matrix is
// supported. A generator refuses more before it allocates anything.
const MaxNodes = MaxEdgeListNodes

// erPreallocMax caps the edges ErdosRenyi allocates room for before drawing
// (16 MiB of edges); larger graphs grow by append.
const erPreallocMax = 1 << 20

// erStream separates the Erdős–Rényi random stream from any other stream a
// caller derives from the same seed.
const erStream = 0x65726473_72656e79 // "erdsreny"

// Generators returns the names Generate accepts besides a file path.
func Generators() []string { return []string{"er", "ring", "path", "complete", "star", "torus"} }

// Generate returns the graph named by name on m nodes: "er" (Erdős–Rényi
// with edge probability pc, drawn from seed), "ring", "path", "complete",
// "star", "torus", or else the path of an edge-list file (see ReadEdgeList),
// whose node count must equal m unless m ≤ 0. The graph is always connected:
// a disconnected file is refused.
func Generate(name string, m int, pc float64, seed uint64) (*Graph, error) {
	var (
		g   *Graph
		err error
	)
	switch name {
	case "er":
		g, err = ErdosRenyi(m, pc, seed)
	case "ring":
		g, err = Ring(m)
	case "path":
		g, err = Path(m)
	case "complete":
		g, err = Complete(m)
	case "star":
		g, err = Star(m)
	case "torus":
		g, err = Torus(m)
	default:
		if _, statErr := os.Stat(name); statErr != nil {
			return nil, fmt.Errorf("topology %q: not one of %s, nor a readable edge-list file: %w",
				name, strings.Join(Generators(), "|"), statErr)
		}
		g, err = ReadEdgeList(name)
		if err != nil {
			return nil, err
		}
		if m > 0 && g.N != m {
			return nil, fmt.Errorf("topology %s: %d nodes in the file, want %d", name, g.N, m)
		}
		if !g.Connected() {
			return nil, fmt.Errorf("topology %s: graph is not connected", name)
		}
		return g, nil
	}
	if err != nil {
		return nil, fmt.Errorf("topology %s: %w", name, err)
	}
	return g, nil
}

// ErdosRenyi draws G(m, pc): every pair of nodes is an edge independently
// with probability pc. It draws again, from the same stream seeded by seed,
// until the graph is connected, and fails after ErdosRenyiTries draws. It
// refuses m and p_c whose expected edge count exceeds MaxErdosRenyiEdges,
// and m past MaxNodes.
func ErdosRenyi(m int, pc float64, seed uint64) (*Graph, error) {
	if m < 1 {
		return nil, fmt.Errorf("erdos-renyi: %d nodes, want at least 1", m)
	}
	if !(pc >= 0 && pc <= 1) {
		return nil, fmt.Errorf("erdos-renyi: edge probability p_c = %v, want a value in [0, 1]", pc)
	}
	expect := float64(pc * float64(m) * float64(m-1) / 2)
	if expect > MaxErdosRenyiEdges {
		return nil, fmt.Errorf("erdos-renyi: G(m=%d, p_c=%g) expects %.3g edges, above the limit of %.0e "+
			"(memory and the O(m²) draw): lower m or p_c", m, pc, expect, float64(MaxErdosRenyiEdges))
	}
	if err := checkNodes("erdos-renyi", m); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, erStream))
	// Room for the expected edges plus a margin, but no more than
	// erPreallocMax up front: append grows the rest.
	edges := make([][2]int, 0, min(int(expect+float64(4*math.Sqrt(expect)))+1, erPreallocMax))
	for try := 0; try < ErdosRenyiTries; try++ {
		edges = edges[:0]
		for i := 0; i < m; i++ {
			for j := i + 1; j < m; j++ {
				if rng.Float64() < pc {
					edges = append(edges, [2]int{i, j})
				}
			}
		}
		g, err := generated("er", m, edges)
		if err != nil {
			return nil, err
		}
		if g.Connected() {
			return g, nil
		}
	}
	return nil, fmt.Errorf("erdos-renyi: G(m=%d, p_c=%g) was not connected in %d draws from seed %d "+
		"(connectivity needs p_c well above ln(m)/m = %.3g)",
		m, pc, ErdosRenyiTries, seed, detmath.Log(float64(m))/float64(m))
}

// checkNodes refuses a node count out of 1..MaxNodes for the graph
// named name.
func checkNodes(name string, m int) error {
	if m < 1 || m > MaxNodes {
		return fmt.Errorf("%s: %d nodes, want 1 to %d", name, m, MaxNodes)
	}
	return nil
}

// Ring returns the cycle 0-1-…-(m-1)-0; for m = 2 it is the single edge and
// for m = 1 the lone node.
func Ring(m int) (*Graph, error) {
	if err := checkNodes("ring", m); err != nil {
		return nil, err
	}
	var edges [][2]int
	for i := 0; i+1 < m; i++ {
		edges = append(edges, [2]int{i, i + 1})
	}
	if m > 2 {
		edges = append(edges, [2]int{0, m - 1})
	}
	return generated("ring", m, edges)
}

// Path returns the line 0-1-…-(m-1).
func Path(m int) (*Graph, error) {
	if err := checkNodes("path", m); err != nil {
		return nil, err
	}
	var edges [][2]int
	for i := 0; i+1 < m; i++ {
		edges = append(edges, [2]int{i, i + 1})
	}
	return generated("path", m, edges)
}

// Complete returns the graph with an edge between every pair of nodes. It
// refuses m whose m(m−1)/2 edges exceed MaxErdosRenyiEdges.
func Complete(m int) (*Graph, error) {
	if err := checkNodes("complete", m); err != nil {
		return nil, err
	}
	if n := float64(m) * float64(m-1) / 2; n > MaxErdosRenyiEdges {
		return nil, fmt.Errorf("complete: %d nodes make %.3g edges, above the limit of %.0e (memory): lower m or take another graph", m, n, float64(MaxErdosRenyiEdges))
	}
	edges := make([][2]int, 0, m*(m-1)/2)
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			edges = append(edges, [2]int{i, j})
		}
	}
	return generated("complete", m, edges)
}

// Star returns the star with centre 0 and leaves 1..m-1.
func Star(m int) (*Graph, error) {
	if err := checkNodes("star", m); err != nil {
		return nil, err
	}
	var edges [][2]int
	for i := 1; i < m; i++ {
		edges = append(edges, [2]int{0, i})
	}
	return generated("star", m, edges)
}

// Torus returns the 2-D torus (wrap-around grid) on rows × cols = m nodes,
// rows the largest divisor of m not above √m, node r·cols + c at row r and
// column c. When m is prime (or 2 or 3) rows = 1 and the torus is the ring;
// a side of length 2 contributes one edge, not two.
func Torus(m int) (*Graph, error) {
	if err := checkNodes("torus", m); err != nil {
		return nil, err
	}
	rows, cols := TorusShape(m)
	seen := make(map[[2]int]bool)
	var edges [][2]int
	add := func(i, j int) {
		if i == j {
			return
		}
		e := [2]int{min(i, j), max(i, j)}
		if !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			i := r*cols + c
			add(i, r*cols+(c+1)%cols)
			add(i, ((r+1)%rows)*cols+c)
		}
	}
	return generated("torus", m, edges)
}

// TorusShape returns the rows × cols factorisation Torus uses for m nodes:
// rows is the largest divisor of m with rows ≤ √m.
func TorusShape(m int) (rows, cols int) {
	rows = 1
	for r := 1; r*r <= m; r++ {
		if m%r == 0 {
			rows = r
		}
	}
	return rows, m / rows
}
