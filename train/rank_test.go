package train

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/weights"
)

// memBus connects in-process ranks as a network would: vectors are copied
// at Send, a round's Wait returns once every rank has sent it, and node
// states gathered for a round reach rank 0.
type memBus struct {
	mu       sync.Mutex
	cond     *sync.Cond
	ranks    int
	sent     [2][][][]float32         // [round parity][node]
	each     [2][]map[int][][]float32 // [round parity][node][recipient], after SendEach
	ready    map[int]int              // round → ranks that have sent it
	gathered map[int][]decentral.NodeState
}

func newMemBus(ranks, m int) *memBus {
	b := &memBus{ranks: ranks, ready: map[int]int{}, gathered: map[int][]decentral.NodeState{}}
	b.cond = sync.NewCond(&b.mu)
	for p := range b.sent {
		b.sent[p] = make([][][]float32, m)
		b.each[p] = make([]map[int][][]float32, m)
	}
	return b
}

// memPeers is one rank's Peers and Control on a memBus.
type memPeers struct {
	bus  *memBus
	rank int
	t    int
}

func (p *memPeers) BeginRound(t int, w *graph.Mixing, shares int) error { p.t = t; return nil }

func (p *memPeers) Send(node int, to []int, vecs [][]float32) (int64, error) {
	cp := make([][]float32, len(vecs))
	floats := 0
	for k, v := range vecs {
		cp[k] = slices.Clone(v)
		floats += len(v)
	}
	p.bus.mu.Lock()
	p.bus.sent[p.t%2][node] = cp
	p.bus.each[p.t%2][node] = nil
	p.bus.mu.Unlock()
	return int64(floats) * 4 * int64(len(to)), nil
}

// SendEach sends each node of to its own vectors, as a Byzantine node does:
// the bus keeps a copy per recipient.
func (p *memPeers) SendEach(node int, to []int, vecs [][][]float32) (int64, error) {
	each := make(map[int][][]float32, len(to))
	floats := 0
	for n, j := range to {
		cp := make([][]float32, len(vecs[n]))
		for k, v := range vecs[n] {
			cp[k] = slices.Clone(v)
			floats += len(v)
		}
		each[j] = cp
	}
	p.bus.mu.Lock()
	p.bus.each[p.t%2][node] = each
	p.bus.mu.Unlock()
	return int64(floats) * 4, nil
}

func (p *memPeers) Wait(ctx context.Context) error {
	b := p.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ready[p.t]++
	b.cond.Broadcast()
	for b.ready[p.t] < b.ranks {
		b.cond.Wait()
	}
	return nil
}

func (p *memPeers) Recv(node, from int) [][]float32 {
	p.bus.mu.Lock()
	defer p.bus.mu.Unlock()
	if each := p.bus.each[p.t%2][from]; each != nil {
		return each[node]
	}
	return p.bus.sent[p.t%2][from]
}

func (p *memPeers) Gather(ctx context.Context, round int, states []decentral.NodeState) ([]decentral.NodeState, error) {
	b := p.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.rank != 0 {
		for _, s := range states {
			s.X = slices.Clone(s.X)
			b.gathered[round] = append(b.gathered[round], s)
		}
		b.cond.Broadcast()
		return nil, nil
	}
	m := len(b.sent[0])
	for len(b.gathered[round]) < m-len(states) {
		b.cond.Wait()
	}
	return b.gathered[round], nil
}

// TestRanksEqualTrain: a run spread over K ranks (in-process peers) writes
// on rank 0 the metrics rows, the counters and the final model of the same
// run in one process, exactly.
func TestRanksEqualTrain(t *testing.T) {
	needA8A(t)
	for _, algo := range []string{decentral.GTSTORM, decentral.DGET} {
		cfg := lrConfig(algo)
		cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 30, 10, 10
		cfg = cfg.WithKnob("period", 7)
		cfg = cfg.WithoutForeignKnobs() // --period is D-GET's
		one := t.TempDir()
		want, err := Train(context.Background(), cfg, Options{Out: one})
		if err != nil {
			t.Fatal(err)
		}
		ks := []int{1, 2, 5, 10}
		if testing.Short() {
			ks = []int{3}
		}
		for _, k := range ks {
			name := fmt.Sprintf("%s/K=%d", algo, k)
			owner := make([]int, cfg.Nodes)
			for i := range owner {
				owner[i] = i * k / cfg.Nodes
			}
			bus := newMemBus(k, cfg.Nodes)
			outs := make([]string, k)
			sums := make([]*Summary, k)
			errs := make([]error, k)
			var wg sync.WaitGroup
			for r := range k {
				outs[r] = filepath.Join(t.TempDir(), fmt.Sprintf("rank%d", r))
				wg.Go(func() {
					p := &memPeers{bus: bus, rank: r}
					sums[r], errs[r] = RunRank(context.Background(), cfg, RankOptions{
						Options: Options{Out: outs[r]}, Rank: r, Owner: owner, Peers: p, Control: p,
					})
				})
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("%s: rank %d: %v", name, r, err)
				}
			}
			sameRows(t, rowsOf(t, outs[0]), rowsOf(t, one))
			got := sums[0]
			if got == nil || got.Samples != want.Samples || got.BytesSentPerNode != want.BytesSentPerNode ||
				got.FinalTestAcc != want.FinalTestAcc || got.ConsensusError != want.ConsensusError {
				t.Fatalf("%s: rank 0's summary %+v, one process %+v", name, got, want)
			}
			for r := 1; r < k; r++ {
				if sums[r] != nil {
					t.Errorf("%s: rank %d returned a summary", name, r)
				}
			}
			sameModelFile(t, name, outs[0], one)
		}
	}
}

// TestRankKeepsItsShares: a rank other than 0 keeps only its nodes' training
// samples (no test set, no evaluation subsets, no fixed gradient batches),
// and its nodes draw the same minibatches and D-GET's large batches, sample
// for sample, as over the whole training set that rank 0 keeps.
func TestRankKeepsItsShares(t *testing.T) {
	needA8A(t)
	cfg, err := lrConfig(decentral.DGET).Resolved()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Batch = 5
	const k = 3
	owner := make([]int, cfg.Nodes)
	for i := range owner {
		owner[i] = i * k / cfg.Nodes
	}
	bus := newMemBus(k, cfg.Nodes)
	runnerOf := func(rank int) *runner {
		p := &memPeers{bus: bus, rank: rank}
		r, err := newRankRunner(cfg, localOf(owner, rank), nil, RankOptions{
			Options: Options{Out: t.TempDir()}, Rank: rank, Owner: owner, Peers: p, Control: p,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.close)
		return r
	}
	whole, part := runnerOf(0).s, runnerOf(1).s
	if whole.test == nil || whole.localSet == nil || len(whole.gradBatches) != cfg.Nodes {
		t.Fatalf("rank 0 keeps test set %v, local set %v and %d gradient batches; want all of them", whole.test != nil, whole.localSet != nil, len(whole.gradBatches))
	}
	local := localOf(owner, 1)
	want := 0
	for _, i := range local {
		want += len(whole.part.Nodes[i])
	}
	if part.train.Len() != want || want == whole.train.Len() {
		t.Fatalf("rank 1 keeps %d training samples, want its nodes' %d (of %d)", part.train.Len(), want, whole.train.Len())
	}
	if part.test != nil || part.evalSet != nil || part.localSet != nil || part.gradBatches != nil {
		t.Fatal("rank 1 keeps evaluation data, which only rank 0 uses")
	}
	same := func(what string, a, b *data.Batch) {
		t.Helper()
		if a.Len() != b.Len() {
			t.Fatalf("%s: %d samples, want %d", what, a.Len(), b.Len())
		}
		for n := range a.Index {
			ca, va := a.Data.Sparse(a.Index[n])
			cb, vb := b.Data.Sparse(b.Index[n])
			if a.Data.Labels[a.Index[n]] != b.Data.Labels[b.Index[n]] || !slices.Equal(ca, cb) || !slices.Equal(va, vb) {
				t.Fatalf("%s: sample %d differs from the whole data set's", what, n)
			}
		}
	}
	ps, ws := newSampler(part.sampler), newSampler(whole.sampler)
	for round := range 4 {
		for _, i := range local {
			same(fmt.Sprintf("round %d node %d's minibatch", round, i), ps.Sample(i).(*data.Batch), ws.Sample(i).(*data.Batch))
			for _, n := range []int{0, 12} {
				pb, wb := ps.FullBatch(i, n), ws.FullBatch(i, n)
				if len(pb) != len(wb) {
					t.Fatalf("node %d's large batch of %d: %d pieces, want %d", i, n, len(pb), len(wb))
				}
				for j := range pb {
					same(fmt.Sprintf("round %d node %d's large batch of %d, piece %d", round, i, n, j), pb[j].(*data.Batch), wb[j].(*data.Batch))
				}
			}
		}
	}
}

// sameModelFile fails unless the model files in folders got and want hold
// the same parameters, bit for bit.
func sameModelFile(t *testing.T, name, got, want string) {
	t.Helper()
	a, err := weights.Read(filepath.Join(got, ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := weights.Read(filepath.Join(want, ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	for j := range b.Params {
		if math.Float32bits(a.Params[j]) != math.Float32bits(b.Params[j]) {
			t.Fatalf("%s: model parameter %d is %v, one process %v", name, j, a.Params[j], b.Params[j])
		}
	}
}
