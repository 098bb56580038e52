package transport

import "fmt"

// Another process may claim a live rank's number: a second `gtstorm rank
// --rank R`, started by mistake with another ranks file. This rank knows
// how many rounds rank R completed; a stream that claims fewer is not R's
// (a rank's count never goes back, and a reconnect carries it on), so it is
// refused, and the run goes on with the real rank R.

// knownRounds returns the rounds this rank knows rank completed: what its
// link acknowledged and, on rank 0, the latest round of rank's node states
// that arrived. It takes rc.mu and the gather lock in turn, and visits
// every node state once: it runs once a stream.
func (rc *rankConn) knownRounds(rank int) int64 {
	rc.mu.Lock()
	done := rc.data.ackedLocked(rank)
	rc.mu.Unlock()
	return max(done, rc.control.gatheredRounds(rank))
}

// impostor describes a stream (a link's HELLO, a BYE) of a process
// claiming rank that says it completed rounds, fewer than the live rank
// did, or returns "".
func (rc *rankConn) impostor(rank int, rounds int64) string {
	if known := rc.knownRounds(rank); rounds < known {
		return impostorText(rank, known, rounds)
	}
	return ""
}

// staleState describes the first state of node, of round, on a new gather
// stream of a process claiming rank, when it goes back before the node's
// latest state that arrived (a reset resends that one at most), or
// returns "". Only the node's own latest round counts: the links may run
// ahead of a state sent again.
func (c *Control) staleState(rank, node int, round int64) string {
	g := &c.gather
	g.mu.Lock()
	last, ok := g.last[node]
	g.mu.Unlock()
	if ok && round < int64(last) {
		return impostorText(rank, int64(last), round)
	}
	return ""
}

// impostorText is the refusal of a stream claiming rank after rounds
// rounds, where rank completed known.
func impostorText(rank int, known, rounds int64) string {
	return fmt.Sprintf("rank %d is live and completed %d rounds; a process claiming rank %d after %d rounds is another one (started twice, or with another ranks file)",
		rank, known, rank, rounds)
}
