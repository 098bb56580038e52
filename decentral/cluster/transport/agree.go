package transport

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// Agreeing on a resume round: every rank tells rank 0, on its gather
// stream, the rounds it keeps checkpoints of, in a HELLO frame with K =
// agreeK whose text lists them ("12,16,20"); rank 0 answers each with the
// latest round all ranks keep ("16"), or "none".
const agreeK = 1

// agreeBox holds, on rank 0, the rounds each rank keeps.
type agreeBox struct {
	rounds map[int][]int // by rank
}

// AgreeRound returns the latest round of which every rank keeps a
// checkpoint, given this rank's: where all ranks of a run resume. It waits
// at most the peer timeout for the others.
func (x *Exchange) AgreeRound(ctx context.Context, rounds []int) (int, error) {
	if x.cfg.Rank != 0 {
		return x.askRound(ctx, rounds)
	}
	g := &x.gather
	g.mu.Lock()
	defer g.mu.Unlock()
	g.agree.rounds[0] = slices.Clone(rounds)
	g.cond.Broadcast()
	return x.commonLocked(ctx)
}

// commonLocked waits, holding the gather lock, until every rank's rounds
// are in and returns the latest common one.
func (x *Exchange) commonLocked(ctx context.Context) (int, error) {
	g := &x.gather
	deadline := time.Now().Add(x.timeout)
	err := x.waitGatherLocked(ctx, func() bool { return len(g.agree.rounds) == len(x.cfg.Addrs) }, func() error {
		if err := x.stoppedOwingLocked(-1); err != nil {
			return fmt.Errorf("transport: no resume round: %w", err)
		}
		if time.Now().Before(deadline) {
			return nil
		}
		var missing []string
		for r := range x.cfg.Addrs {
			if _, ok := g.agree.rounds[r]; !ok {
				missing = append(missing, fmt.Sprintf("rank %d at %s", r, x.cfg.Addrs[r]))
			}
		}
		return fmt.Errorf("transport: no resume round from %s within %v", strings.Join(missing, ", "), x.timeout)
	})
	if err != nil {
		return 0, err
	}
	common := g.agree.rounds[0]
	for _, rs := range g.agree.rounds {
		common = slices.DeleteFunc(slices.Clone(common), func(t int) bool { return !slices.Contains(rs, t) })
	}
	if len(common) == 0 {
		return -1, fmt.Errorf("transport: no round of which all %d ranks keep a checkpoint", len(x.cfg.Addrs))
	}
	return slices.Max(common), nil
}

// askRound sends this rank's rounds to rank 0 and returns its answer. It
// waits for the answer at most twice the peer timeout: rank 0 itself waits
// up to the peer timeout for the other ranks' rounds.
func (x *Exchange) askRound(ctx context.Context, rounds []int) (int, error) {
	text := make([]string, len(rounds))
	for k, t := range rounds {
		text[k] = strconv.Itoa(t)
	}
	answer, err := x.askRank0(ctx, agreeK, "the resume round", strings.Join(text, ","))
	if err != nil {
		return 0, err
	}
	if answer == "none" {
		return -1, fmt.Errorf("transport: no round of which all %d ranks keep a checkpoint", len(x.cfg.Addrs))
	}
	return strconv.Atoi(answer)
}

// answerRound files rank's rounds (the text of an agree frame), waits for
// every rank's and answers with the common round.
func (x *Exchange) answerRound(ss grpc.ServerStream, rank int, text string) error {
	var rounds []int
	for _, s := range strings.Split(text, ",") {
		if s == "" {
			continue
		}
		t, err := strconv.Atoi(s)
		if err != nil || t < 0 {
			return fmt.Errorf("resume rounds %q from rank %d", text, rank)
		}
		rounds = append(rounds, t)
	}
	g := &x.gather
	g.mu.Lock()
	g.agree.rounds[rank] = rounds
	g.cond.Broadcast()
	t, err := x.commonLocked(ss.Context())
	g.mu.Unlock()
	answer := strconv.Itoa(t)
	if err != nil {
		answer = "none"
	}
	reply := wire.AppendText(nil, wire.Header{Kind: wire.Hello, K: agreeK}, answer)
	return ss.SendMsg(&reply)
}
