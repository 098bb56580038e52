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
func (c *Control) AgreeRound(ctx context.Context, rounds []int) (int, error) {
	if c.cfg.Rank != 0 {
		return c.askRound(ctx, rounds)
	}
	g := &c.gather
	g.mu.Lock()
	defer g.mu.Unlock()
	g.agree.rounds[0] = slices.Clone(rounds)
	g.cond.Broadcast()
	return c.commonLocked(ctx)
}

// commonLocked waits, holding the gather lock, until every rank's rounds
// are in and returns the latest common one.
func (c *Control) commonLocked(ctx context.Context) (int, error) {
	g := &c.gather
	deadline := time.Now().Add(c.timeout)
	err := c.waitGatherLocked(ctx, func() bool { return len(g.agree.rounds) == len(c.cfg.Addrs) }, func() error {
		if err := c.stoppedOwingLocked(-1); err != nil {
			return fmt.Errorf("transport: no resume round: %w", err)
		}
		if time.Now().Before(deadline) {
			return nil
		}
		var missing []string
		for r := range c.cfg.Addrs {
			if _, ok := g.agree.rounds[r]; !ok {
				missing = append(missing, fmt.Sprintf("rank %d at %s", r, c.cfg.Addrs[r]))
			}
		}
		return fmt.Errorf("transport: no resume round from %s within %v", strings.Join(missing, ", "), c.timeout)
	})
	if err != nil {
		return 0, err
	}
	common := g.agree.rounds[0]
	for _, rs := range g.agree.rounds {
		common = slices.DeleteFunc(slices.Clone(common), func(t int) bool { return !slices.Contains(rs, t) })
	}
	if len(common) == 0 {
		return -1, fmt.Errorf("transport: no round of which all %d ranks keep a checkpoint", len(c.cfg.Addrs))
	}
	return slices.Max(common), nil
}

// askRound sends this rank's rounds to rank 0 and returns its answer. It
// waits for the answer at most twice the peer timeout: rank 0 itself waits
// up to the peer timeout for the other ranks' rounds.
func (c *Control) askRound(ctx context.Context, rounds []int) (int, error) {
	text := make([]string, len(rounds))
	for k, t := range rounds {
		text[k] = strconv.Itoa(t)
	}
	answer, err := c.askRank0(ctx, agreeK, "the resume round", strings.Join(text, ","))
	if err != nil {
		return 0, err
	}
	if answer == "none" {
		return -1, fmt.Errorf("transport: no round of which all %d ranks keep a checkpoint", len(c.cfg.Addrs))
	}
	return strconv.Atoi(answer)
}

// answerRound files rank's rounds (the text of an agree frame), waits for
// every rank's and answers with the common round.
func (c *Control) answerRound(ss grpc.ServerStream, rank int, text string) error {
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
	g := &c.gather
	g.mu.Lock()
	g.agree.rounds[rank] = rounds
	g.cond.Broadcast()
	t, err := c.commonLocked(ss.Context())
	g.mu.Unlock()
	answer := strconv.Itoa(t)
	if err != nil {
		answer = "none"
	}
	reply := wire.AppendText(nil, wire.Header{Kind: wire.Hello, K: agreeK}, answer)
	return ss.SendMsg(&reply)
}
