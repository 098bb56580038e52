package transport

import (
	"sync"

	"github.com/gtstorm/gtstorm/decentral"
)

// Control is one rank's control plane, over the connections of its
// Exchange (see Exchange.Control): at evaluation rounds every rank's node
// states go to rank 0 (Gather); before a run resumes, or starts, the ranks
// agree through rank 0 on the round to resume from (AgreeRound) and on
// their input files (AgreeInputs, AgreeInputsKernels, KernelSets); a rank
// that stops says so to every peer (Leave), and a rank told to stop ends
// every wait at once (Abort). Rank 0 serves the other ranks' gather
// streams, on which all of it but the links' BYEs travels.
type Control struct {
	*rankConn
	gather   gatherBox    // rank 0: the node states gathered, by round, and the agreements
	gatherTo gatherClient // other ranks: the stream to rank 0
}

var _ controlPlane = (*Control)(nil)

func newControl(rc *rankConn) *Control {
	c := &Control{rankConn: rc}
	c.gather.cond = sync.NewCond(&c.gather.mu)
	c.gather.rounds = make(map[int][]decentral.NodeState)
	c.gather.agree.rounds = make(map[int][]int)
	return c
}

// wake wakes the waits on the gather box.
func (c *Control) wake() {
	g := &c.gather
	g.mu.Lock()
	g.cond.Broadcast()
	g.mu.Unlock()
}

// gatheredRounds returns, on rank 0, the latest round of rank's node
// states that arrived, or 0. It visits every node state once.
func (c *Control) gatheredRounds(rank int) int64 {
	var done int64
	g := &c.gather
	g.mu.Lock()
	for node, round := range g.last {
		if node < len(c.owner) && c.owner[node] == rank {
			done = max(done, int64(round))
		}
	}
	g.mu.Unlock()
	return done
}
