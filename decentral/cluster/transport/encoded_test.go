package transport

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/compress"
)

// TestChocoOverRanks runs CHOCO-SGD with a compressor over ranks through the
// transport, its messages travelling encoded in several chunks, and checks
// every node's parameters and counters against a single process bit for
// bit, and that the payload bytes the transport counts are the optimizer's
// bytes sent to nodes of other ranks.
func TestChocoOverRanks(t *testing.T) {
	const m, p, rounds = 8, 1000, 6
	er := static(graph.MetropolisHastings(must(graph.ErdosRenyi(m, 0.5, 3))))
	for _, tt := range []struct {
		name, comp string
		ranks      int
	}{
		{"qsgd:7 2 ranks", "qsgd:7", 2},
		{"topk:0.1 3 ranks", "topk:0.1", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			choco, err := decentral.NewMethod(decentral.CHOCO, decentral.Knobs{"compress": tt.comp})
			if err != nil {
				t.Fatal(err)
			}
			cfg := decentral.Config{Method: choco, Seed: 4, Workers: 2, Topology: er, StepSizes: decentral.StepSizes{Eta0: 0.05}}
			x0 := make([]float32, p)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			ref := reference(t, ctx, cfg, m, p, rounds, x0)
			owner := func(i int) int { return i * tt.ranks / m }
			// 128-byte chunks: every message travels in several frames.
			cl := newCluster(t, tt.ranks, m, owner, func(r int, c *Config) { c.VectorLen, c.ChunkBytes = p, 128 })
			opts := make([]*decentral.Optimizer, tt.ranks)
			errs := make([]error, tt.ranks)
			var wg sync.WaitGroup
			for r, x := range cl.xs {
				c := cfg
				c.Local, c.Exchange = x.Local(), x
				src, orc := quadratic(m, p)
				var err error
				if opts[r], err = decentral.New(c, er.Mixing(0), src, orc, x0); err != nil {
					t.Fatal(err)
				}
				defer opts[r].Close()
				wg.Go(func() { errs[r] = runRounds(ctx, opts[r], rounds) })
			}
			wg.Wait()
			checkErrs(t, errs)
			size := int64(must(compress.Parse(tt.comp)).Size(p))
			w, want := er.Mixing(0), ref.Counters()
			var sent, recv int64
			for r, o := range opts {
				got := o.Counters()
				var remote int64 // bytes the rank's nodes sent to other ranks, once per rank (multicast)
				for _, i := range o.Local() {
					for n, v := range ref.Node(i) {
						if math.Float32bits(o.Node(i)[n]) != math.Float32bits(v) {
							t.Fatalf("rank %d node %d: x[%d] = %v, single process %v", r, i, n, o.Node(i)[n], v)
						}
					}
					if got.BytesSent[i] != want.BytesSent[i] || got.BytesSent[i] != rounds*size*int64(len(w.To(i))) {
						t.Errorf("rank %d node %d counts %d bytes sent, single process %d, want %d", r, i, got.BytesSent[i], want.BytesSent[i], rounds*size*int64(len(w.To(i))))
					}
					ranks := map[int]bool{}
					for _, j := range w.To(i) {
						if owner(j) != r && !ranks[owner(j)] {
							ranks[owner(j)] = true
							remote += rounds * size
						}
					}
				}
				st := cl.xs[r].Stats()
				if st.BytesSent != remote {
					t.Errorf("rank %d: the transport counts %d payload bytes sent, want %d: each node's message once per other rank", r, st.BytesSent, remote)
				}
				sent, recv = sent+st.BytesSent, recv+st.BytesRecv
			}
			if sent != recv || sent == 0 {
				t.Errorf("the ranks sent %d payload bytes and received %d", sent, recv)
			}
		})
	}
}
