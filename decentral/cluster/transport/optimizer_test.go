package transport

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// A quadratic problem: node i's loss is ½‖x − c_i‖².
type qBatch struct{ node int }

func (*qBatch) Len() int { return 1 }

type qSource struct{ b []qBatch }

func (s *qSource) Sample(node int) decentral.Batch { return &s.b[node] }

type qOracle struct{ c [][]float32 }

func (o qOracle) Grad(_ int, x []float32, b decentral.Batch, g []float32) (float32, error) {
	c := o.c[b.(*qBatch).node]
	var loss float32
	for n := range x {
		d := x[n] - c[n]
		g[n], loss = d, loss+d*d/2
	}
	return loss, nil
}

func quadratic(m, p int) (*qSource, qOracle) {
	s, o := &qSource{b: make([]qBatch, m)}, qOracle{c: make([][]float32, m)}
	for i := range m {
		s.b[i].node, o.c[i] = i, vec(i, 0, 0, p)
		for n := range o.c[i] {
			o.c[i][n] = float32(math.Mod(float64(o.c[i][n]), 10)) // finite, moderate
		}
	}
	return s, o
}

// runRounds initialises o and takes rounds steps.
func runRounds(ctx context.Context, o *decentral.Optimizer, rounds int) error {
	if err := o.Init(ctx); err != nil {
		return err
	}
	for range rounds {
		if err := o.Step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// reference runs cfg's m nodes in one process for rounds rounds on the
// quadratic of dimension p: the run the ranks must equal.
func reference(t *testing.T, ctx context.Context, cfg decentral.Config, m, p, rounds int, x0 []float32) *decentral.Optimizer {
	t.Helper()
	src, orc := quadratic(m, p)
	ref, err := decentral.New(cfg, cfg.Topology.Mixing(0), src, orc, x0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	if err := runRounds(ctx, ref, rounds); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestOptimizerOverRanks runs decentral optimizers spread over ranks through
// the transport and checks every node's parameters against a single process
// running all nodes with decentral.MemExchange, bit for bit, with and
// without pipelined rounds (BeginNextRound, after SetFinalRound).
func TestOptimizerOverRanks(t *testing.T) {
	for _, pipe := range []bool{false, true} {
		name := "plain"
		if pipe {
			name = "pipelined"
		}
		t.Run(name, func(t *testing.T) { testOptimizerOverRanks(t, pipe) })
	}
}

func testOptimizerOverRanks(t *testing.T, pipe bool) {
	const m, p, rounds = 8, 1000, 6
	exp, err := graph.OnePeerExponential(m)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		algo  string
		topo  graph.Topology
		ranks int
	}{
		{"GT-STORM ring 2 ranks", decentral.GTSTORM, static(graph.MetropolisHastings(must(graph.Ring(m)))), 2},
		{"DSGD exp 4 ranks", decentral.DSGD, exp, 4},
		{"GNSD ER 3 ranks", decentral.GNSD, static(graph.MetropolisHastings(must(graph.ErdosRenyi(m, 0.5, 3)))), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := decentral.Config{Algorithm: tt.algo, Workers: 2, Topology: tt.topo, StepSizes: decentral.StepSizes{Eta0: 0.05}}
			x0 := make([]float32, p)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			ref := reference(t, ctx, cfg, m, p, rounds, x0)
			owner := func(i int) int { return i * tt.ranks / m }
			cl := newCluster(t, tt.ranks, m, owner, func(r int, c *Config) { c.VectorLen, c.ChunkBytes = p, 1024 })
			opts := make([]*decentral.Optimizer, tt.ranks)
			errs := make([]error, tt.ranks)
			var wg sync.WaitGroup
			for r, x := range cl.xs {
				c := cfg
				c.Local, c.Exchange = x.Local(), x
				src, orc := quadratic(m, p)
				var err error
				if opts[r], err = decentral.New(c, tt.topo.Mixing(0), src, orc, x0); err != nil {
					t.Fatal(err)
				}
				defer opts[r].Close()
				if pipe {
					opts[r].SetFinalRound(rounds)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[r] = runAndGather(ctx, opts, r, x.Control(), rounds)
				}()
			}
			wg.Wait()
			checkErrs(t, errs)
			checkOverRanks(t, cl, opts, ref, p)
		})
	}
}

// runAndGather runs rounds rounds of rank r's optimizer opts[r] and
// gathers every rank's nodes on rank 0, whose optimizer opts[0] imports
// them.
func runAndGather(ctx context.Context, opts []*decentral.Optimizer, r int, ctl *Control, rounds int) error {
	if err := runRounds(ctx, opts[r], rounds); err != nil {
		return err
	}
	// Every rank's nodes reach rank 0, which imports them.
	var states []decentral.NodeState
	for _, i := range opts[r].Local() {
		states = append(states, opts[r].ExportNode(i, decentral.NodeState{}))
	}
	got, err := ctl.Gather(ctx, rounds, states)
	if err != nil || r != 0 {
		return err
	}
	for _, s := range got {
		if err := opts[0].ImportNode(s); err != nil {
			return err
		}
	}
	return nil
}

// checkOverRanks checks that rank 0's optimizer, after gathering, and each
// rank's nodes hold what the single process ref holds, bit for bit, and
// that the ranks' bytes sent and received agree.
func checkOverRanks(t *testing.T, cl *testRanks, opts []*decentral.Optimizer, ref *decentral.Optimizer, p int) {
	t.Helper()
	a, b := make([]float32, p), make([]float32, p)
	opts[0].Mean(a)
	ref.Mean(b)
	for n := range b {
		if math.Float32bits(a[n]) != math.Float32bits(b[n]) {
			t.Fatalf("rank 0's x̄[%d] after gathering = %v, single process %v", n, a[n], b[n])
		}
	}
	if got, want := opts[0].Counters().Samples, ref.Counters().Samples; got != want {
		t.Errorf("rank 0 counts %d samples after gathering, single process %d", got, want)
	}
	var sent, recv int64
	for _, x := range cl.xs {
		st := x.Stats()
		sent, recv = sent+st.BytesSent, recv+st.BytesRecv
	}
	if sent != recv || sent == 0 {
		t.Errorf("the ranks sent %d bytes and received %d", sent, recv)
	}
	for r, o := range opts {
		for _, i := range o.Local() {
			if got, want := o.Counters().BytesSent[i], ref.Counters().BytesSent[i]; got != want {
				t.Errorf("rank %d node %d counted %d bytes sent, single process %d", r, i, got, want)
			}
			got, want := o.Node(i), ref.Node(i)
			for n := range want {
				if math.Float32bits(got[n]) != math.Float32bits(want[n]) {
					t.Fatalf("rank %d node %d: x[%d] = %v, single process %v", r, i, n, got[n], want[n])
				}
			}
		}
	}
}
