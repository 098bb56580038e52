package transport

import "github.com/gtstorm/gtstorm/decentral/graph"

// maxRecvTab bounds Recv's table of edges, in entries (8 bytes each): a
// rank of more local nodes × nodes finds its edges in the map instead.
const maxRecvTab = 1 << 20

// inEdgesLocked returns the edges between a node of this rank and a node of
// another from which a round of w expects vectors, making them and those
// of w's edges the other way the first time; the list is kept for the
// rounds of the same w (a static topology's every round).
func (x *Exchange) inEdgesLocked(w *graph.Mixing) []*edge {
	if w == x.inW {
		return x.in
	}
	x.in = x.in[:0]
	for _, i := range x.local {
		for _, j := range w.From(i) {
			if x.owner[j] != x.cfg.Rank {
				x.in = append(x.in, x.edgeLocked(i, j))
			}
		}
		for _, j := range w.To(i) {
			if x.owner[j] != x.cfg.Rank {
				x.edgeLocked(i, j)
			}
		}
	}
	x.inW = w
	return x.in
}

// recvEdge returns the edge between node, of this rank, and from, of
// another, or nil: without a lock from Recv's table, else from the map.
func (x *Exchange) recvEdge(node, from int) *edge {
	if node < 0 || node >= len(x.localPos) || x.localPos[node] < 0 {
		return nil
	}
	if x.recvTab != nil {
		return x.recvTab[x.localPos[node]*x.cfg.Nodes+from].Load()
	}
	x.emu.RLock()
	defer x.emu.RUnlock()
	return x.edges[edgeKey(node, from)]
}
