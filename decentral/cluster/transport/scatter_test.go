package transport

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestSendEach: nodes 1 and 4 of a ring of 6 on two ranks send each
// neighbour its own vectors, those of another rank over the network and
// those of its own in memory, and every Recv returns, bit for bit, what
// its sender sent it; bytes count as MemExchange counts them.
func TestSendEach(t *testing.T) {
	ring, err := graph.Ring(6)
	if err != nil {
		t.Fatal(err)
	}
	topo := static(graph.MetropolisHastings(ring))
	const shares, p, rounds = 2, 1000, 4
	liar := func(i int) bool { return i == 1 || i == 4 }
	// what node i sends node j: its own vector, or one per recipient.
	msgID := func(i, j int) int {
		if liar(i) {
			return 100*i + j
		}
		return i
	}
	cl := newCluster(t, 2, 6, func(i int) int { return i / 3 }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, x := range cl.xs {
		wg.Go(func() {
			errs[r] = func() error {
				for round := range rounds {
					w := topo.Mixing(round)
					if err := x.BeginRound(round, w, shares); err != nil {
						return err
					}
					mem := decentral.NewMemExchange(w.Graph())
					for _, i := range x.Local() {
						to := w.To(i)
						msgs := make([][][]float32, len(to))
						for n, j := range to {
							msgs[n] = make([][]float32, shares)
							for k := range shares {
								msgs[n][k] = vec(msgID(i, j), round, k, p)
							}
						}
						var got, want int64
						var err error
						if liar(i) {
							got, err = x.SendEach(i, to, msgs)
							want, _ = mem.SendEach(i, to, msgs)
						} else {
							got, err = x.Send(i, to, msgs[0])
							want, _ = mem.Send(i, to, msgs[0])
						}
						if err != nil {
							return err
						}
						if got != want {
							return fmt.Errorf("round %d node %d: %d bytes counted, MemExchange %d", round, i, got, want)
						}
					}
					if err := x.Wait(ctx); err != nil {
						return err
					}
					for _, i := range x.Local() {
						for _, j := range w.From(i) {
							if err := sameVecs(x.Recv(i, j), msgID(j, i), round, shares, p); err != nil {
								return fmt.Errorf("round %d: Recv(%d, %d): %w", round, i, j, err)
							}
						}
					}
				}
				return nil
			}()
		})
	}
	wg.Wait()
	checkErrs(t, errs)
}
