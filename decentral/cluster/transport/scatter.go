package transport

import (
	"fmt"
	"slices"
)

// scattered is a local node's SendEach of a round: vecs[n] went to to[n].
type scattered struct {
	nodes []int
	vecs  [][][]float32
}

// to returns what the node sent node, or nil.
func (s *scattered) to(node int) [][]float32 {
	if n := slices.Index(s.nodes, node); n >= 0 {
		return s.vecs[n]
	}
	return nil
}

// SendEach sends node's vectors of the round to the nodes of to, each its
// own: vecs[n] to to[n], over its edge's stream to another rank or in
// memory to this rank's nodes. It is how a Byzantine node's lies, which
// differ per neighbour, travel (decentral.ScatterExchange): the frames are
// those of Send, from the node that sends them, and the receiving rank
// cannot tell them from honest ones. vecs must stay unchanged until the
// round's Recv calls are over. It returns the payload bytes, 4 × floats.
func (x *Exchange) SendEach(node int, to []int, vecs [][][]float32) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(vecs) != len(to) {
		return 0, fmt.Errorf("transport: rank %d: node %d sends %d messages to %d nodes", x.cfg.Rank, node, len(vecs), len(to))
	}
	n := x.shares
	for _, msg := range vecs {
		if len(msg) != x.shares {
			n = len(msg)
		}
	}
	if err := x.checkSendLocked("SendEach", node, to, n); err != nil {
		return 0, err
	}
	if x.decode != nil {
		return 0, fmt.Errorf("transport: rank %d: SendEach from node %d, but this run's messages travel encoded (SendEncoded)", x.cfg.Rank, node)
	}
	var floats int64
	for _, msg := range vecs {
		f, err := x.floatsLocked(node, msg)
		if err != nil {
			return 0, err
		}
		floats += int64(f)
	}
	par := x.round & 1
	x.sent[par][node] = x.sent[par][node][:0]
	x.each[par][node] = scattered{to, vecs}
	x.queueEachLocked(node, to, vecs)
	return floats * 4, nil
}

// queueEachLocked queues, for each node to[n] on another rank, the vectors
// vecs[n] that node sends it this round, and wakes the edge's writer.
func (x *Exchange) queueEachLocked(node int, to []int, vecs [][][]float32) {
	for n, j := range to {
		if x.owner[j] == x.cfg.Rank {
			continue
		}
		e := x.edgeLocked(node, j)
		e.queue = append(e.queue, job{round: x.round, vecs: vecs[n]})
		x.outPending++
		e.wakeWriter()
	}
}

// floatsLocked checks the lengths of node's vectors vecs, setting the
// run's vector length from the first vector seen, and returns their floats.
func (x *Exchange) floatsLocked(node int, vecs [][]float32) (int, error) {
	floats := 0
	for k, v := range vecs {
		if x.veclen == 0 {
			x.veclen = len(v)
		}
		if len(v) != x.veclen {
			return 0, fmt.Errorf("transport: rank %d: node %d's vector %d has %d floats, want %d", x.cfg.Rank, node, k, len(v), x.veclen)
		}
		floats += len(v)
	}
	return floats, nil
}
