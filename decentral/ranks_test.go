package decentral

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// rankBus carries the vectors of K in-process ranks, as a network transport
// between processes would: each rank's Send copies its vectors (labelled
// with the round), and Wait returns once every rank has sent the round.
// A rank may run one round ahead of another, so rounds are double-buffered.
type rankBus struct {
	mu    sync.Mutex
	cond  *sync.Cond
	ranks int
	sent  [2][][][]float32 // [round parity][node] → the node's vectors
	msgs  [2][][]byte      // [round parity][node] → the node's encoded message
	ready map[int]int      // round → ranks whose sends are complete
	sends map[int]int      // round → Sends made
}

func newRankBus(ranks, m int) *rankBus {
	b := &rankBus{ranks: ranks, ready: map[int]int{}, sends: map[int]int{}}
	b.cond = sync.NewCond(&b.mu)
	for p := range b.sent {
		b.sent[p] = make([][][]float32, m)
		b.msgs[p] = make([][]byte, m)
	}
	return b
}

// rankExchange is one rank's RoundExchange on a rankBus. It is an
// EncodedExchange too: a compressing method's messages cross the bus as
// copies of their bytes, which Wait decodes for every node the rank hears,
// its own included, with the decoder New gave it. It is a
// PipelinedExchange: after BeginNextRound, Sends are of the next round
// while Recv reads the current one until the next Wait returns.
type rankExchange struct {
	bus    *rankBus
	t      int // the round Recv reads
	sendT  int // the round Sends and Wait are of
	early  int // BeginNextRound calls
	p      int // floats in a decoded message
	decode func(dst []float32, msg []byte) error
	dec    map[int][][]float32 // sending node → its decoded message, this round
}

var (
	_ EncodedExchange   = (*rankExchange)(nil)
	_ PipelinedExchange = (*rankExchange)(nil)
)

func (e *rankExchange) SetDecoder(decode func(dst []float32, msg []byte) error) {
	e.decode, e.dec = decode, map[int][][]float32{}
}

func (e *rankExchange) SendEncoded(node int, to []int, msg []byte, dec []float32) (int64, error) {
	if e.decode == nil {
		return 0, fmt.Errorf("SendEncoded before SetDecoder")
	}
	e.bus.mu.Lock()
	e.bus.msgs[e.sendT%2][node] = append([]byte(nil), msg...)
	e.bus.sent[e.sendT%2][node] = nil
	e.bus.sends[e.sendT]++
	e.bus.mu.Unlock()
	return int64(len(msg)) * int64(len(to)), nil
}

func (e *rankExchange) BeginRound(t int, w *graph.Mixing, shares int) error {
	e.t, e.sendT = t, t
	return nil
}

func (e *rankExchange) BeginNextRound(t int, w *graph.Mixing, shares int) error {
	if t != e.t+1 || e.sendT != e.t {
		return fmt.Errorf("BeginNextRound(%d) in round %d (sending round %d)", t, e.t, e.sendT)
	}
	e.sendT = t
	e.early++
	return nil
}

func (e *rankExchange) Send(node int, to []int, vecs [][]float32) (int64, error) {
	cp := make([][]float32, len(vecs))
	floats := 0
	for k, v := range vecs {
		cp[k] = append([]float32(nil), v...)
		floats += len(v)
	}
	e.bus.mu.Lock()
	e.bus.sent[e.sendT%2][node] = cp
	e.bus.sends[e.sendT]++
	e.bus.mu.Unlock()
	return int64(floats) * 4 * int64(len(to)), nil
}

func (e *rankExchange) Wait(ctx context.Context) error {
	b := e.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	e.t = e.sendT
	b.ready[e.t]++
	b.cond.Broadcast()
	for b.ready[e.t] < b.ranks {
		b.cond.Wait()
	}
	if e.decode != nil {
		for from, msg := range b.msgs[e.t%2] {
			if msg == nil {
				continue
			}
			if e.dec[from] == nil {
				e.dec[from] = [][]float32{make([]float32, e.p)}
			}
			if err := e.decode(e.dec[from][0], msg); err != nil {
				return fmt.Errorf("node %d's message of round %d: %w", from, e.t, err)
			}
		}
	}
	return ctx.Err()
}

func (e *rankExchange) Recv(node, from int) [][]float32 {
	e.bus.mu.Lock()
	defer e.bus.mu.Unlock()
	if e.decode != nil && e.bus.msgs[e.t%2][from] != nil {
		return e.dec[from]
	}
	return e.bus.sent[e.t%2][from]
}

// blocks returns K contiguous blocks of m nodes.
func blocks(m, k int) [][]int {
	out := make([][]int, k)
	for i := range m {
		r := i * k / m
		out[r] = append(out[r], i)
	}
	return out
}

// TestRanksEqualOneProcess: a run split over K ranks, each running its own
// block of nodes and exchanging copies of its vectors, ends with every
// node's state and counters bit for bit those of the one-process run,
// whatever K, for every algorithm and on static and time-varying graphs.
// Mixing sums a row's neighbours in the same fixed order on every rank, a
// node's batches come from its own stream, and its gradients depend only on
// its batch and parameters: nothing depends on where the node runs.
func TestRanksEqualOneProcess(t *testing.T) {
	const m, rounds = 10, 25
	pr := newLS(m, 6, 40, 1, 9)
	er := mustGraph(graph.ErdosRenyi(m, 0.4, 3))
	// Each rank builds its own topology, as a process does (a LinkDrop
	// caches its last matrix and is not shared between goroutines).
	topologies := map[string]func() graph.Topology{
		"static": func() graph.Topology { return graph.Static{W: mustMixing(t, graph.MixLaplacian, er)} },
		"exp": func() graph.Topology {
			e, err := graph.OnePeerExponential(m)
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		"link-drop": func() graph.Topology {
			l, err := graph.NewLinkDrop(er, graph.MixLaplacian, 0.3, 5)
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
	}
	for _, algo := range Algorithms() {
		for tname, newTopo := range topologies {
			if tname != "static" && staticOnly(algo) {
				continue
			}
			topo := newTopo()
			knobs := Knobs{"period": 7}
			if algo == CHOCO {
				knobs["compress"] = "qsgd:7" // stochastic messages, the same on every rank
			}
			cfg := Config{Method: knobbed(t, algo, knobs), Workers: 2, Topology: topo, StepSizes: StepSizes{Eta0: 0.05}}
			if algo == CHOCO {
				cfg.Seed = 3
			}
			want, _ := lsRun(t, cfg, topo.Mixing(0), pr, 3, 11)
			for range rounds {
				if err := want.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []int{1, 2, 3, 5} {
				name := fmt.Sprintf("%s/%s/K=%d", algo, tname, k)
				bus := newRankBus(k, m)
				ranks := make([]*Optimizer, k)
				exs := make([]*rankExchange, k)
				for r, local := range blocks(m, k) {
					c := cfg
					ex := &rankExchange{bus: bus, p: pr.d}
					exs[r] = ex
					c.Local, c.Exchange, c.Topology = local, ex, newTopo()
					ranks[r], _ = lsRun(t, c, c.Topology.Mixing(0), pr, 3, 11)
					if k != 3 { // K = 3 runs unpipelined
						ranks[r].SetFinalRound(rounds)
					}
					if (ex.decode != nil) != (algo == CHOCO) {
						t.Fatalf("%s: SetDecoder called: %v", name, ex.decode != nil)
					}
				}
				var wg sync.WaitGroup
				errs := make([]error, k)
				for r, o := range ranks {
					wg.Go(func() {
						for range rounds {
							if errs[r] = o.Step(ctx); errs[r] != nil {
								// Release the others: a failed rank's round
								// still counts as sent.
								return
							}
						}
					})
				}
				wg.Wait()
				for r, err := range errs {
					if err != nil {
						t.Fatalf("%s: rank %d: %v", name, r, err)
					}
				}
				for r, ex := range exs {
					want := rounds - 1 // every round but the last begins the next
					if _, prepared := knobbed(t, algo, nil).(Preparer); k == 3 || prepared {
						want = 0 // unpipelined; CHOCO's and DSGDm's messages are prepared
					}
					if ex.early != want {
						t.Fatalf("%s: rank %d began %d rounds early, want %d", name, r, ex.early, want)
					}
				}
				if n := bus.sends[rounds]; n != 0 {
					t.Fatalf("%s: %d Sends of round %d, which never begins", name, n, rounds)
				}
				wantC := want.Counters()
				for _, o := range ranks {
					c := o.Counters()
					for _, i := range o.Local() {
						for slab := range want.cur {
							if !sameBits(o.row(o.cur[slab], i), want.row(want.cur[slab], i)) {
								t.Fatalf("%s: node %d's %s differs from the one-process run", name, i, want.desc.Slabs[slab])
							}
						}
						if c.BytesSent[i] != wantC.BytesSent[i] || o.samples[i] != want.samples[i] || o.evals[i] != want.evals[i] {
							t.Errorf("%s: node %d counted %d bytes, %d samples, %d evaluations; one process %d, %d, %d",
								name, i, c.BytesSent[i], o.samples[i], o.evals[i], wantC.BytesSent[i], want.samples[i], want.evals[i])
						}
					}
				}
				// Rank 0 gathers the others' nodes and measures the run as
				// the one process does.
				var st NodeState
				for _, o := range ranks[1:] {
					for _, i := range o.Local() {
						st = o.ExportNode(i, st)
						if err := ranks[0].ImportNode(st); err != nil {
							t.Fatal(err)
						}
					}
				}
				a, b := make([]float32, pr.d), make([]float32, pr.d)
				ranks[0].Mean(a)
				want.Mean(b)
				gotC := ranks[0].Counters()
				if !sameBits(a, b) || ranks[0].ConsensusError() != want.ConsensusError() || gotC.Samples != wantC.Samples ||
					gotC.MaxBytesSent() != wantC.MaxBytesSent() || !(ranks[0].Loss() == want.Loss() || math.IsNaN(want.Loss())) {
					t.Errorf("%s: rank 0's measures after gathering differ from the one-process run's", name)
				}
			}
		}
	}
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
			return false
		}
	}
	return true
}

// TestImportNodeChecked: a node state is refused for a node of the rank
// itself, out of range, of the wrong length or not finite.
func TestImportNodeChecked(t *testing.T) {
	pr := newLS(4, 2, 5, 1, 1)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(4)))
	o, _ := lsRun(t, Config{Algorithm: DSGD, Local: []int{0, 1}, StepSizes: StepSizes{Eta0: 0.1}}, mx, pr, 1, 1)
	nan := float32(math.NaN())
	for _, s := range []NodeState{
		{Node: 1, X: []float32{1, 2}},
		{Node: 4, X: []float32{1, 2}},
		{Node: 2, X: []float32{1}},
		{Node: 2, X: []float32{1, nan}},
		{Node: 3, X: []float32{1, 2}, Samples: -1},
	} {
		if err := o.ImportNode(s); err == nil {
			t.Errorf("ImportNode(%+v) accepted", s)
		}
	}
	if err := o.ImportNode(NodeState{Node: 2, X: []float32{1, 2}, Samples: 5}); err != nil {
		t.Error(err)
	}
}

// TestLocalNodesChecked: Config.Local must list distinct nodes of [0, m) in
// increasing order.
func TestLocalNodesChecked(t *testing.T) {
	pr := newLS(4, 2, 5, 1, 1)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(4)))
	for _, local := range [][]int{{-1}, {4}, {1, 1}, {2, 1}} {
		_, err := New(Config{Algorithm: DSGD, Local: local, StepSizes: StepSizes{Eta0: 0.1}}, mx, newLSSampler(pr, 1, 1), lsOracle{pr}, make([]float32, 2))
		if err == nil {
			t.Errorf("Local %v accepted", local)
		}
	}
}
