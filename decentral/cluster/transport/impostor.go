package transport

import "fmt"

// Another process may claim a live rank's number: a second `gtstorm rank
// --rank R`, started by mistake with another ranks file. This rank knows
// how many rounds rank R completed; a stream that claims fewer is not R's
// (a rank's count never goes back, and a reconnect carries it on), so it is
// refused, and the run goes on with the real rank R.

// knownRounds returns the rounds this rank knows rank completed: what its
// link acknowledged (unless gathered), and, on rank 0, the latest round of
// rank's node states that arrived. It takes x.mu and x.gather.mu in turn.
func (x *Exchange) knownRounds(rank int, gathered bool) int64 {
	var done int64
	if !gathered {
		x.mu.Lock()
		if l := x.links[rank]; l != nil {
			done = l.acked
		}
		x.mu.Unlock()
	}
	g := &x.gather
	g.mu.Lock()
	for node, round := range g.last {
		if node < len(x.owner) && x.owner[node] == rank {
			done = max(done, int64(round))
		}
	}
	g.mu.Unlock()
	return done
}

// impostor describes a stream of a process claiming rank that says it
// completed rounds, fewer than the live rank did, or returns "". With
// gathered, only the node states that arrived count: a state sent again
// after a reset may lag the links.
func (x *Exchange) impostor(rank int, rounds int64, gathered bool) string {
	if known := x.knownRounds(rank, gathered); rounds < known {
		return impostorText(rank, known, rounds)
	}
	return ""
}

// impostorText is the refusal of a stream claiming rank after rounds
// rounds, where rank completed known.
func impostorText(rank int, known, rounds int64) string {
	return fmt.Sprintf("rank %d is live and completed %d rounds; a process claiming rank %d after %d rounds is another one (started twice, or with another ranks file)",
		rank, known, rank, rounds)
}
