package decentral

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// MaxEdgeListNodes bounds the node count of an edge-list file, so that a
// stray huge index is refused instead of allocating memory for it.
const MaxEdgeListNodes = 1 << 20

// ReadEdgeList reads a graph from a text file with one edge "i j" per line,
// nodes numbered from 0; blank lines and everything after a '#' are ignored.
// The node count is the largest index plus one, at most MaxEdgeListNodes.
// Malformed lines, self loops, duplicate edges (in either orientation) and
// negative or too large indices are errors naming the file and line.
func ReadEdgeList(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read edge list: %w", err)
	}
	defer f.Close()
	return ParseEdgeList(f, path)
}

// ParseEdgeList reads an edge list in ReadEdgeList's format from r; name
// labels errors.
func ParseEdgeList(r io.Reader, name string) (*Graph, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var edges [][2]int
	firstLine := make(map[[2]int]int)
	n := 0
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if k := strings.IndexByte(text, '#'); k >= 0 {
			text = text[:k]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: %q: want two node indices \"i j\"", name, line, strings.TrimSpace(text))
		}
		var e [2]int
		for k, s := range fields {
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%s:%d: node %q: want a non-negative integer", name, line, s)
			}
			if v >= MaxEdgeListNodes {
				return nil, fmt.Errorf("%s:%d: node %d: beyond the limit of %d nodes (indices 0..%d)", name, line, v, MaxEdgeListNodes, MaxEdgeListNodes-1)
			}
			e[k] = v
		}
		if e[0] == e[1] {
			return nil, fmt.Errorf("%s:%d: self loop on node %d", name, line, e[0])
		}
		key := [2]int{min(e[0], e[1]), max(e[0], e[1])}
		if prev, dup := firstLine[key]; dup {
			return nil, fmt.Errorf("%s:%d: edge (%d, %d) already given on line %d", name, line, e[0], e[1], prev)
		}
		firstLine[key] = line
		edges = append(edges, e)
		n = max(n, key[1]+1)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(edges) == 0 {
		return nil, fmt.Errorf("%s: no edges", name)
	}
	g, err := NewGraph(n, edges)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// WriteEdgeList writes g in ReadEdgeList's format: a comment line with the
// node and edge counts, then one "i j" line per edge.
func WriteEdgeList(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %d nodes, %d edges\n", g.N, len(g.Edges))
	for _, e := range g.Edges {
		fmt.Fprintf(bw, "%d %d\n", e[0], e[1])
	}
	return bw.Flush()
}
