package robust

import "github.com/gtstorm/gtstorm/decentral/graph"

// Median is the coordinate-wise median of BRIDGE-M (Yang and Bajwa 2019):
// in every coordinate, node i takes the median of the values of its closed
// neighbourhood N̄_i = {i} ∪ N_i, unweighted; of an even count, the mean of
// the two middle values.
type Median struct{}

// String returns "median".
func (Median) String() string { return AggMedian }

// Check accepts every W: a node's own vector is a median of one.
func (Median) Check(*graph.Mixing) error { return nil }

// Aggregate sets dst to the coordinate-wise median of own and vecs.
func (Median) Aggregate(dst, own []float32, _ float32, _ []float32, vecs [][]float32, s *Scratch) {
	n := len(vecs) + 1
	vals := s.Float32(n)
	for k := range dst {
		gather(vals, own, vecs, k)
		if n%2 == 1 {
			dst[k] = vals[n/2]
		} else {
			dst[k] = float32((float64(vals[n/2-1]) + float64(vals[n/2])) / 2)
		}
	}
}
