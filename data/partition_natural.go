package data

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
)

// The natural partition (--partition natural): whole writers to nodes.

// PartitionNatural gives every writer's samples (see Dataset.Writers) to
// one node, balancing the nodes by sample count: the writers, largest
// first (writers of equal size in an order drawn from seed), each go to
// the node holding the fewest samples so far (the lowest-numbered of
// equals). The most and the least loaded node then differ by at most the
// largest writer's samples. It is refused for a dataset without writers
// and for fewer writers than nodes.
func PartitionNatural(d *Dataset, m int, seed uint64) (*Partition, error) {
	const what = "natural"
	if len(d.Writers) == 0 || len(d.Writers) != d.Len() {
		return nil, fmt.Errorf("partition natural of %s: the dataset has no writers (natural keeps each writer's samples on one node; use it with femnist)", d.Name)
	}
	if err := checkNodes(d, m, what); err != nil {
		return nil, err
	}
	groups, err := writerGroups(d)
	if err != nil {
		return nil, err
	}
	if len(groups) < m {
		return nil, fmt.Errorf("partition natural of %s: %d writers for %d nodes, want at least one writer a node", d.Name, len(groups), m)
	}
	rank := make([]int, len(groups))
	for pos, w := range rand.New(newPCG(seed, streamPartition, 0)).Perm(len(groups)) {
		rank[w] = pos
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(len(groups[b]), len(groups[a])); c != 0 {
			return c
		}
		return cmp.Compare(rank[a], rank[b])
	})
	nodes, load := make([][]int, m), make([]int, m)
	for _, w := range order {
		best := 0
		for i := 1; i < m; i++ {
			if load[i] < load[best] {
				best = i
			}
		}
		nodes[best] = append(nodes[best], groups[w]...)
		load[best] += len(groups[w])
	}
	return newPartition(d, nodes, what)
}

// writerGroups returns the sample indices of each writer that has samples,
// in writer-id order.
func writerGroups(d *Dataset) ([][]int, error) {
	byID := map[int32][]int{}
	for i, w := range d.Writers {
		if w < 0 {
			return nil, fmt.Errorf("partition natural of %s: sample %d has writer id %d, want ≥ 0", d.Name, i, w)
		}
		byID[w] = append(byID[w], i)
	}
	ids := make([]int32, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	groups := make([][]int, len(ids))
	for k, id := range ids {
		groups[k] = byID[id]
	}
	return groups, nil
}

// WritersIn returns how many distinct writers the samples at indices
// have; 0 for data without writers.
func (d *Dataset) WritersIn(indices []int) int {
	if d.Writers == nil {
		return 0
	}
	seen := map[int32]bool{}
	for _, i := range indices {
		seen[d.Writers[i]] = true
	}
	return len(seen)
}
