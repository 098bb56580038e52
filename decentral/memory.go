package decentral

import "math"

// The functions of this file give the memory this package allocates for a
// run, from the run's sizes alone, so that a caller can refuse a run that
// cannot fit before allocating anything (see train.Config.EstimateMemory).
// They follow New and the methods' alloc (optimizer.go, dsgd.go, gnsd.go,
// gtstorm.go), NewMemExchange, NewGraph and the generators, and the mixings
// with their spectrum computation (mixing.go, spectrum.go): keep them in step.

// Sizes of the slice headers and elements the estimates count.
const (
	sliceHeader = 24 // bytes of a slice header
	edgeBytes   = 16 // one [2]int edge
)

// slabs returns how many m × p float32 slabs algo keeps (each of the
// method's slabs and its next-round copy) and how many of them a Snapshot
// copies.
func slabs(algo string) (kept, snapshot int, err error) {
	names, err := StateSlabs(algo)
	if err != nil {
		return 0, 0, err
	}
	return 2 * len(names), len(names), nil
}

// SlabFloats returns the floats per node of the optimizer's state slabs for
// algo with p parameters: x and its next-round copy for every algorithm,
// plus v and its copy for GT-STORM, plus y, the last gradient and their
// copies for GNSD (2p, 4p and 6p). Counters.StateFloats counts only the
// state an algorithm needs (0, 2p, 2p), not the copies.
func SlabFloats(algo string, p int) (int, error) {
	k, _, err := slabs(algo)
	return k * p, err
}

// SnapshotFloats returns the floats per node that State copies for a
// checkpoint: x, plus v (GT-STORM) or y and the last gradient (GNSD).
func SnapshotFloats(algo string, p int) (int, error) {
	_, k, err := slabs(algo)
	return k * p, err
}

// OptimizerBytes returns the bytes New allocates for m nodes of p
// parameters with the given number of worker goroutines: the state slabs,
// the per-node counters and message lists, the in-memory exchange, each
// worker's two gradient buffers, the p-float reduction buffers and, for a
// method that compresses, each node's message.
func OptimizerBytes(algo string, m, p, workers int) (int64, error) {
	f, err := SlabFloats(algo, p)
	if err != nil {
		return 0, err
	}
	const perNode = 9*8 + 16 + // samples … rLoss, evalL; errs
		sliceHeader + 2*sliceHeader + // send[i] and its two vectors
		sliceHeader + 2*sliceHeader // the exchange's sent[i]
	n, pp, w := int64(m), int64(p), int64(max(workers, 1))
	b := n*int64(f)*4 + n*perNode
	b += w * (2*pp*4 + sliceHeader) // scratch
	b += pp * (4 + 8 + 4)           // x0, acc, mean32
	if d, _ := describe(algo); d.Compress != "" {
		// Each node's decoded message and its encoding, at most 4p bytes
		// (the uncompressed vector).
		b += n * (pp*(4+4) + 2*sliceHeader + 8)
	}
	return b, nil
}

// ByzantineBytes returns the bytes an attack on messages and a robust rule
// add to OptimizerBytes: each of the byzantine nodes keeps two rounds of
// its own message to every neighbour (degree of them on average, p floats
// per shared slab), and each worker a robust rule's two p-float sums.
func ByzantineBytes(algo string, byzantine, p, workers int, degree float64, lies, robust bool) (int64, error) {
	d, err := describe(algo)
	if err != nil {
		return 0, err
	}
	var b int64
	if lies {
		perNode := 2 * degree * float64(d.shares()) * (float64(float64(p)*4) + sliceHeader)
		b += int64(float64(byzantine) * perNode)
	}
	if lies || robust {
		b += int64(max(workers, 1)) * (int64(p)*16 + 4*sliceHeader)
	}
	return b, nil
}

// CheckpointBytes returns the bytes one checkpoint of m nodes with p
// parameters allocates while it is written: the Snapshot's copies of the
// state and the encoded file, which holds them again.
func CheckpointBytes(algo string, m, p int) (int64, error) {
	f, err := SnapshotFloats(algo, p)
	if err != nil {
		return 0, err
	}
	state := int64(m)*int64(f)*4 + int64(m)*4*8 // slabs and per-node counters
	return 2 * state, nil
}

// ExpectedEdges returns the edge count of topology name (a generator of
// NewTopology) on m nodes: p_c·m(m−1)/2 on average for "er", exact for the
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

// GraphBytes returns the bytes a Graph of m nodes and e edges keeps (its
// edge list and neighbour lists) and the peak while a generator builds it,
// when its own edge list (and, for the torus, its set of seen edges) is
// alive as well.
func GraphBytes(name string, m int, e float64) (kept, build int64) {
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
