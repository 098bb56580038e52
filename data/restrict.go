package data

import (
	"errors"
	"fmt"
	"slices"
)

// Subset returns a dataset of the samples of d at indices, in that order,
// with storage of its own: it shares none of d's sample storage, so d can be
// freed while the subset lives. Every index must lie in [0, d.Len()); Subset
// panics otherwise, as slice indexing does.
func (d *Dataset) Subset(indices []int) *Dataset {
	s := &Dataset{
		Name:    fmt.Sprintf("%s[%d of %d samples]", d.Name, len(indices), d.Len()),
		Shape:   slices.Clone(d.Shape),
		Classes: d.Classes,
		Labels:  make([]uint8, len(indices)),
		Mean:    slices.Clone(d.Mean),
		Std:     slices.Clone(d.Std),
	}
	for k, i := range indices {
		s.Labels[k] = d.Labels[i]
	}
	if d.Writers != nil {
		s.Writers, s.WriterNames = make([]int32, len(indices)), slices.Clone(d.WriterNames)
		for k, i := range indices {
			s.Writers[k] = d.Writers[i]
		}
	}
	dim := d.Dim()
	switch {
	case d.Bytes != nil:
		s.Bytes = make([]uint8, 0, len(indices)*dim)
		for _, i := range indices {
			s.Bytes = append(s.Bytes, d.Bytes[i*dim:(i+1)*dim]...)
		}
	case d.Floats != nil:
		s.Floats = make([]float32, 0, len(indices)*dim)
		for _, i := range indices {
			s.Floats = append(s.Floats, d.Floats[i*dim:(i+1)*dim]...)
		}
	case d.RowPtr != nil:
		nnz := 0
		for _, i := range indices {
			nnz += d.RowPtr[i+1] - d.RowPtr[i]
		}
		s.RowPtr = make([]int, 1, len(indices)+1)
		s.Cols = make([]int32, 0, nnz)
		s.Vals = make([]float32, 0, nnz)
		for _, i := range indices {
			lo, hi := d.RowPtr[i], d.RowPtr[i+1]
			s.Cols = append(s.Cols, d.Cols[lo:hi]...)
			s.Vals = append(s.Vals, d.Vals[lo:hi]...)
			s.RowPtr = append(s.RowPtr, len(s.Cols))
		}
	}
	return s
}

// Restrict returns what the given nodes of partition p of d need to draw
// their minibatches: a compact dataset holding only the samples of their
// shares (in d's order, each once), and a partition over it in which each of
// these nodes has its share — the same samples in the same order, at their
// new indices — and every other node has none. Hist and the fingerprint a
// Sampler checks saved states against stay those of p, so a Sampler over
// the result draws for these nodes exactly the samples one over d and p
// draws, and the two restore each other's states. Neither d nor p is
// changed, and the result shares no storage with d, which can be freed.
func Restrict(d *Dataset, p *Partition, nodes []int) (*Dataset, *Partition, error) {
	if p == nil || len(p.Nodes) == 0 {
		return nil, nil, errors.New("restrict: empty partition, want at least one node")
	}
	if len(nodes) == 0 {
		return nil, nil, fmt.Errorf("restrict %s: no nodes to keep", d.Name)
	}
	kept := make([]bool, len(p.Nodes))
	var union []int
	for _, i := range nodes {
		if i < 0 || i >= len(p.Nodes) {
			return nil, nil, fmt.Errorf("restrict %s: node %d, want a node of [0, %d)", d.Name, i, len(p.Nodes))
		}
		if !p.Holds(i) {
			return nil, nil, fmt.Errorf("restrict %s: node %d's share was dropped already", d.Name, i)
		}
		if kept[i] {
			continue
		}
		kept[i] = true
		for _, j := range p.Nodes[i] {
			if j < 0 || j >= d.Len() {
				return nil, nil, fmt.Errorf("restrict %s: node %d holds sample %d, outside its %d samples", d.Name, i, j, d.Len())
			}
		}
		union = append(union, p.Nodes[i]...)
	}
	slices.Sort(union)
	union = slices.Compact(union)
	q := &Partition{Nodes: make([][]int, len(p.Nodes)), Hist: p.Hist, fp: p.fingerprint(), kept: kept}
	for i, keep := range kept {
		if !keep {
			continue
		}
		share := make([]int, len(p.Nodes[i]))
		for k, j := range p.Nodes[i] {
			share[k], _ = slices.BinarySearch(union, j)
		}
		q.Nodes[i] = share
	}
	return d.Subset(union), q, nil
}

// Holds reports whether p holds node's share: every node of a whole
// partition, only the kept nodes of one that Restrict returned.
func (p *Partition) Holds(node int) bool {
	return node >= 0 && node < len(p.Nodes) && (p.kept == nil || p.kept[node])
}

// fingerprint hashes the node lists of p, or of the whole partition p was
// restricted from.
func (p *Partition) fingerprint() uint64 {
	if p.kept != nil {
		return p.fp
	}
	return fingerprint(p)
}
