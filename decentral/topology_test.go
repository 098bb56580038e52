package decentral

import (
	"math"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// alternating is a time-varying Topology: W_t = ws[t mod len(ws)].
type alternating []*graph.Mixing

func (a alternating) Mixing(t int) *graph.Mixing { return a[t%len(a)] }

// TestStaticTopologyIsDefault: Static{W} runs exactly as no Topology.
func TestStaticTopologyIsDefault(t *testing.T) {
	pr := newLS(6, 10, 30, 1, 5)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.ErdosRenyi(6, 0.4, 2)))
	for _, algo := range Algorithms() {
		a, _ := lsRun(t, Config{Algorithm: algo, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, 3, 9)
		b, _ := lsRun(t, Config{Algorithm: algo, Topology: graph.Static{W: mx}, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, 3, 9)
		for range 10 {
			if err := a.Step(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		sa, _ := a.State()
		sb, _ := b.State()
		if !sameSlabs(sa, sb) || a.Counters().MaxBytesSent() != b.Counters().MaxBytesSent() {
			t.Errorf("%s: Static topology differs from none", algo)
		}
	}
}

// TestTimeVaryingTopology: each round mixes with the topology's W_t and
// sends to W_t's neighbours, and gradient tracking stays exact under doubly
// stochastic W_t: x̄_{t+1} = x̄_t − η_t v̄_t.
func TestTimeVaryingTopology(t *testing.T) {
	pr := newLS(6, 10, 30, 1, 5)
	ws := alternating{
		mustMixing(t, graph.MixLaplacian, mustGraph(graph.ErdosRenyi(6, 0.4, 2))),
		mustMixing(t, graph.MixMetropolis, mustGraph(graph.Path(6))), // λ_min −0.24: D² may use it
		mustMixing(t, graph.MixLaplacian, mustGraph(graph.Star(6))),
	}
	for _, algo := range Algorithms() {
		if staticOnly(algo) {
			continue
		}
		o, _ := lsRun(t, Config{Algorithm: algo, Workers: 2, Topology: ws, StepSizes: StepSizes{Eta0: 0.05, Rho: 3}}, ws[0], pr, 3, 9)
		shares := o.desc.Shares()
		bytes := make([]int64, o.Nodes())
		worst := 0.0
		for r := range 12 {
			xbar := meanOf(o.Nodes(), o.Dim(), o.Node)
			vbar := meanOf(o.Nodes(), o.Dim(), o.Direction)
			eta := o.Eta()
			if err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
			if o.Mixing() != ws[r%len(ws)] {
				t.Fatalf("%s round %d mixed with another matrix than W_t", algo, r+1)
			}
			for i := range bytes {
				bytes[i] += int64(shares*o.Dim()*4) * int64(ws[r%len(ws)].Graph().Degree(i))
			}
			if o.desc.Direction == 0 {
				continue // the identity is gradient tracking's
			}
			next := meanOf(o.Nodes(), o.Dim(), o.Node)
			for k := range next {
				want := xbar[k] - eta*vbar[k]
				worst = max(worst, math.Abs(next[k]-want)/(1+math.Abs(want)))
			}
		}
		if worst > 1e-5 {
			t.Errorf("%s: |x̄_{t+1} − (x̄_t − η_t v̄_t)| up to %.2e under time-varying W_t", algo, worst)
		}
		for i, b := range o.Counters().BytesSent {
			if b != bytes[i] {
				t.Errorf("%s: node %d sent %d bytes, want %d (to each round's neighbours)", algo, i, b, bytes[i])
			}
		}
	}
	// A matrix over other nodes is refused.
	bad := alternating{ws[0], mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(5)))}
	o, _ := lsRun(t, Config{Algorithm: GTSTORM, Topology: bad, StepSizes: StepSizes{Eta0: 0.05}}, ws[0], pr, 3, 9)
	if err := o.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if err := o.Step(ctx); err == nil || !strings.Contains(err.Error(), "over 6 nodes") {
		t.Errorf("a 5-node W_2 for 6 nodes: error %v", err)
	}
}

// TestRegistry: every registered method has a unique name, x as its first
// slab and a valid direction slab.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range Algorithms() {
		d := knobbed(t, name, nil).Describe()
		if d.Name != name {
			t.Errorf("%s registered as %s", d.Name, name)
		}
		if seen[d.Name] {
			t.Errorf("%s registered twice", d.Name)
		}
		seen[d.Name] = true
		if s := d.Slabs; len(s) == 0 || s[0] != "x" {
			t.Errorf("%s: slabs %q, want x first", d.Name, s)
		}
		if d.Direction < 0 || d.Direction >= len(d.Slabs) {
			t.Errorf("%s: direction slab %d of %d", d.Name, d.Direction, len(d.Slabs))
		}
		if err := d.validate(); err != nil {
			t.Error(err)
		}
	}
}
