package graph

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// MaxEdgeListNodes bounds the node count of an edge-list file, so that a
// stray huge index is refused before anything is allocated for it. It is the
// largest graph whose λ the sparse eigensolver computes with its full basis
// (lanczosMaxBasis vectors of 8·MaxEdgeListNodes bytes within
// lanczosBasisBytes), in about half a minute for a sparse random graph.
const MaxEdgeListNodes = 1 << 18

// nodesDirective starts the comment "# nodes: N" that declares an edge
// list's node count.
const nodesDirective = "nodes:"

// utf8BOM is the byte-order mark some editors put at the start of a file.
const utf8BOM = "\ufeff"

// ReadEdgeList reads a graph from a text file with one edge "i j" per line,
// nodes numbered from 0; blank lines and everything after a '#' are ignored,
// as is a UTF-8 byte-order mark at the start. The node count is the largest
// index plus one unless a comment line "# nodes: N" declares it (as
// WriteEdgeList writes, so that a graph with isolated nodes or none but a
// single node survives the trip); it is at most MaxEdgeListNodes. Malformed
// lines, self loops, duplicate edges (in either orientation), negative or
// too large indices and a file with neither edges nor a declared count are
// errors naming the file and line.
func ReadEdgeList(path string) (*Graph, error) {
	f, _, err := inputfile.Open(path) // not a FIFO or a device, which never end
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
	n, nLine := 0, 0 // largest index + 1 and the line it is on
	declared, declLine := 0, 0
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, utf8BOM)
		}
		if k := strings.IndexByte(text, '#'); k >= 0 {
			if strings.TrimSpace(text[:k]) == "" {
				count, ok, err := parseNodesComment(text[k+1:])
				switch {
				case err != nil:
					return nil, fmt.Errorf("%s:%d: %w", name, line, err)
				case ok && declLine > 0:
					return nil, fmt.Errorf("%s:%d: node count declared again (first on line %d)", name, line, declLine)
				case ok:
					declared, declLine = count, line
				}
			}
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
				return nil, fmt.Errorf("%s:%d: node %d: beyond the limit of %d nodes (indices 0..%d), "+
					"the largest graph whose mixing matrix is supported", name, line, v, MaxEdgeListNodes, MaxEdgeListNodes-1)
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
		if key[1]+1 > n {
			n, nLine = key[1]+1, line
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	switch {
	case declLine > 0 && n > declared:
		return nil, fmt.Errorf("%s:%d: node %d: outside the %d nodes declared on line %d", name, nLine, n-1, declared, declLine)
	case declLine > 0:
		n = declared
	case len(edges) == 0:
		return nil, fmt.Errorf("%s: no edges (and no %q line declaring the node count)", name, "# "+nodesDirective+" N")
	}
	g, err := New(n, edges)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// parseNodesComment reports whether comment, the text after a line's
// leading '#', is the node-count declaration "nodes: N", and returns N. A
// declaration whose N is a number but not a valid count is an error; any
// other comment is not a declaration.
func parseNodesComment(comment string) (n int, ok bool, err error) {
	rest, found := strings.CutPrefix(strings.TrimSpace(comment), nodesDirective)
	if !found {
		return 0, false, nil
	}
	rest = strings.TrimSpace(rest)
	v, convErr := strconv.ParseInt(rest, 10, 64)
	if convErr != nil && !errors.Is(convErr, strconv.ErrRange) {
		return 0, false, nil
	}
	if convErr != nil || v < 1 || v > MaxEdgeListNodes {
		return 0, false, fmt.Errorf("node count %q: want 1..%d", rest, MaxEdgeListNodes)
	}
	return int(v), true, nil
}

// WriteEdgeList writes g in ReadEdgeList's format: the node-count line
// "# nodes: N", a comment with the edge count, then one "i j" line per edge.
func WriteEdgeList(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s %d\n# %d edges\n", nodesDirective, g.N, len(g.Edges))
	for _, e := range g.Edges {
		fmt.Fprintf(bw, "%d %d\n", e[0], e[1])
	}
	return bw.Flush()
}
