package robust

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// Trim is the coordinate-wise trimmed mean of BRIDGE-T (Yang and Bajwa
// 2019): in every coordinate, node i sorts the values of its closed
// neighbourhood N̄_i = {i} ∪ N_i, drops the B largest and the B smallest,
// and averages the rest, unweighted (W only says who the neighbours are).
// It needs 2B < |N̄_i| at every node; Trim{0} is the unweighted mean of a
// node and its neighbours.
type Trim struct {
	// B is the number of values dropped at each end, B ≥ 0.
	B int
}

// String returns "trim:b".
func (t Trim) String() string { return AggTrim + ":" + strconv.Itoa(t.B) }

// Check refuses a W in which some node has 2B or fewer vectors to trim.
func (t Trim) Check(w *graph.Mixing) error {
	for i := range w.Nodes() {
		if n := len(w.From(i)) + 1; 2*t.B >= n {
			return fmt.Errorf("aggregate %s: node %d averages %d vectors (itself and %d neighbours), want more than 2b = %d", t, i, n, n-1, 2*t.B)
		}
	}
	return nil
}

// Aggregate sets dst to the trimmed mean of own and vecs, coordinate by
// coordinate, summed in float64: in node order when nothing is trimmed,
// else in sorted order.
func (t Trim) Aggregate(dst, own []float32, _ float32, _ []float32, vecs [][]float32, s *Scratch) {
	n := len(vecs) + 1
	if t.B == 0 {
		inv := 1 / float64(n)
		for k, v := range own {
			sum := float64(v)
			for _, u := range vecs {
				sum += float64(u[k])
			}
			dst[k] = float32(sum * inv)
		}
		return
	}
	vals := s.Float32(n)
	inv := 1 / float64(n-2*t.B)
	for k := range dst {
		gather(vals, own, vecs, k)
		sum := 0.0
		for _, v := range vals[t.B : n-t.B] {
			sum += float64(v)
		}
		dst[k] = float32(sum * inv)
	}
}

// gather sets vals to coordinate k of own and vecs, sorted.
func gather(vals, own []float32, vecs [][]float32, k int) {
	vals[0] = own[k]
	for n, u := range vecs {
		vals[n+1] = u[k]
	}
	slices.Sort(vals)
}
