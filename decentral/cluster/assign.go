package cluster

import "fmt"

// Assign returns the rank of each of a run's nodes: the file's node table
// if it has one (which must list exactly nodes nodes), else contiguous
// balanced blocks: with K ranks, q = nodes/K and e = nodes mod K, ranks
// 0..e−1 run q+1 nodes each and the others q, in node order, so that rank
// r's first node is r·q + min(r, e). Every rank must run a node, so nodes
// must be at least K.
func (rk *Ranks) Assign(nodes int) ([]int, error) {
	k := len(rk.Addrs)
	if k == 0 {
		return nil, fmt.Errorf("%s: no ranks", rk.Name)
	}
	if rk.Owner != nil {
		if len(rk.Owner) != nodes {
			return nil, fmt.Errorf("%s lists %d nodes in its node lines, but the run has %d", rk.Name, len(rk.Owner), nodes)
		}
		for i, r := range rk.Owner {
			if r < 0 || r >= k {
				return nil, fmt.Errorf("%s: node %d on rank %d, but there are %d ranks", rk.Name, i, r, k)
			}
		}
		return append([]int(nil), rk.Owner...), nil
	}
	if nodes < k {
		return nil, fmt.Errorf("%d nodes for %d ranks (%s): every rank needs at least one node", nodes, k, rk.Name)
	}
	q, e := nodes/k, nodes%k
	owner := make([]int, 0, nodes)
	for r := 0; r < k; r++ {
		n := q
		if r < e {
			n++
		}
		for range n {
			owner = append(owner, r)
		}
	}
	return owner, nil
}

// Local returns the nodes that owner (from Assign) puts on rank, in
// increasing order.
func (rk *Ranks) Local(rank int, owner []int) []int {
	var local []int
	for i, r := range owner {
		if r == rank {
			local = append(local, i)
		}
	}
	return local
}
