package graph

import "math"

// The functions of this file give the memory a graph and its mixing matrix
// take, from the run's sizes alone, so that a caller can refuse a run that
// cannot fit before building anything (see train.Config.EstimateMemory).
// They follow New and the generators, and the mixings with their spectrum
// computation (mixing.go, spectrum.go): keep them in step.

// Sizes of the slice headers and elements the estimates count.
const (
	sliceHeader = 24 // bytes of a slice header
	edgeBytes   = 16 // one [2]int edge
)

// ExpectedEdges returns the edge count of topology name (a generator of
// Generate) on m nodes: p_c·m(m−1)/2 on average for "er", exact for the
// others; for "exp", the edges of one round's graph (at most m). It returns
// -1 for a name that is no generator (an edge-list file).
func ExpectedEdges(name string, m int, pc float64) float64 {
	n := float64(m)
	switch name {
	case ExpTopology:
		return n
	case "er":
		return pc * n * (n - 1) / 2
	case "ring":
		switch {
		case m <= 1:
			return 0
		case m == 2:
			return 1
		}
		return n
	case "path", "star":
		return math.Max(n-1, 0)
	case "complete":
		return n * (n - 1) / 2
	case "torus":
		rows, cols := TorusShape(max(m, 1))
		e := 0
		for _, side := range []int{rows, cols} {
			switch {
			case side == 2:
				e += m / 2
			case side > 2:
				e += m
			}
		}
		return float64(e)
	}
	return -1
}

// Bytes returns the bytes a Graph of m nodes and e edges keeps (its
// edge list and neighbour lists) and the peak while a generator builds it,
// when its own edge list (and, for the torus, its set of seen edges) is
// alive as well.
func Bytes(name string, m int, e float64) (kept, build int64) {
	n, ee := float64(m), math.Max(e, 0)
	k := float64(ee*edgeBytes) + float64(n*sliceHeader) + float64(2*ee*8) + float64(n*8) // Edges; adj; degrees
	b := k + float64(ee*edgeBytes*1.25)                                                  // the generator's list, grown by append
	if name == "torus" {
		b += float64(ee * 64) // map[[2]int]bool
	}
	return int64(k), int64(b)
}

// MixingBytes returns the bytes a Mixing of kind mixing ("laplacian" or
// "metropolis") on m nodes and e edges keeps (W's rows in float64 and
// float32), and the transient of computing λ_max(L) and λ: nothing where
// the spectrum comes in closed form (graphs of the ring, path, complete,
// star and torus generators, named by topology), m² floats and their
// copies for the dense eigendecomposition of m ≤ 500 nodes, else the
// Lanczos basis.
func MixingBytes(topology, mixing string, m int, e float64) (kept, spectrum int64) {
	n, ee := float64(m), math.Max(e, 0)
	kept = int64(float64(n*(8+4+2*sliceHeader)) + float64(2*ee*(8+4)))
	if m <= 1 || closedForm(topology, mixing) {
		return kept, 0
	}
	if m <= denseSpectrumMax {
		// W as rows, its flattened copy (grown by append) and EigenSym's copy.
		return kept, int64(4 * 8 * n * n)
	}
	b := lanczosBasis(m)
	return kept, int64(float64(float64(b)*8*n) + float64(8*8*n) + float64(float64(b*b)*8*4))
}
