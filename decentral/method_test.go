package decentral

import (
	"math"
	"slices"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// heavyBall is a toy method defined the documented way, to show that a new
// algorithm is its type plus one registry line: DSGD with a local
// heavy-ball momentum m and one knob, Mu,
//
//	m_{i,t+1} = μ m_{i,t} + ∇f_i(x_{i,t}; ζ_{i,t})
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_t m_{i,t+1}.
//
// With μ = 0 it is DSGD, bit for bit.
type heavyBall struct{ Mu float64 }

const heavyBallName = "heavy-ball"

// heavyBallKnobs declares the toy's one knob, μ in [0, 1).
var heavyBallKnobs = []Knob{FloatKnob("mu", "heavy-ball: momentum μ in [0, 1)", 0, func(mu float64) string {
	if !(mu >= 0 && mu < 1) {
		return "a momentum in [0, 1)"
	}
	return ""
})}

func newHeavyBall(k Knobs) Method { return heavyBall{Mu: k.Float("mu")} }

func (heavyBall) Describe() Description {
	return Description{Name: heavyBallName, Slabs: []string{"x", "m"}, Shared: []int{0},
		Direction: 1, StateFloats: 1, Power: SqrtPower}
}

func (heavyBall) Init(c RoundContext) error {
	c.SetLoss(math.NaN())
	return nil // m_0 = 0: New allocates zeroed slabs and Init leaves them
}

func (h heavyBall) Step(c RoundContext) error {
	x, xn := c.Cur(0), c.Next(0)
	m, mn := c.Cur(1), c.Next(1)
	g, _ := c.Scratch()
	loss, err := c.Grad(x, c.Batch(), g)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	mu := float32(h.Mu)
	for k := range mn {
		mn[k] = mu*m[k] + g[k]
	}
	c.Mix(xn, 0, x)
	addScaled(xn, -c.Eta(), mn)
	return checkFinite("x", xn)
}

func (heavyBall) Samples(t int, c Cost) int64 {
	if t == 0 {
		return 0
	}
	return int64(c.Batch)
}

// TestAddMethod adds a toy method through the registry and runs it: the
// registry makes it from its knobs by name, the name-based helpers know it,
// the optimizer runs it from its Description alone, and with μ = 0 it takes
// DSGD's steps bit for bit.
func TestAddMethod(t *testing.T) {
	saved := registry
	registry = append(slices.Clip(registry), registration{heavyBallName, heavyBallKnobs, newHeavyBall})
	t.Cleanup(func() { registry = saved })

	if !slices.Contains(Algorithms(), heavyBallName) {
		t.Fatalf("Algorithms() = %v, want %s among them", Algorithms(), heavyBallName)
	}
	if s, err := StateSlabs(heavyBallName); err != nil || !slices.Equal(s, []string{"x", "m"}) {
		t.Fatalf("StateSlabs = %q, %v", s, err)
	}
	if NeedsStaticGraph(heavyBallName) {
		t.Fatal("the toy needs no static graph")
	}
	if m := knobbed(t, heavyBallName, Knobs{"mu": 0.25, "period": 7}); m != (heavyBall{Mu: 0.25}) {
		t.Fatalf("NewMethod from knobs = %#v, want μ = 0.25", m)
	}
	if _, err := NewMethod(heavyBallName, Knobs{"mu": "fast"}); err == nil {
		t.Fatal("a knob that is no number: no error")
	}
	if _, err := NewMethod(heavyBallName, Knobs{"mu": 1.5}); err == nil || err.Error() != "heavy-ball: mu 1.5: want a momentum in [0, 1)" {
		t.Fatalf("a knob out of range: %v", err)
	}
	if !TakesKnob(heavyBallName, "mu") || !slices.Contains(MethodKnobs(), "mu") {
		t.Fatalf("the registry does not know the toy's knob: %q", MethodKnobs())
	}

	pr := newLS(5, 4, 20, 1, 2)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(5)))
	const rounds, batch, seed = 6, 3, 9
	run := func(cfg Config) *Optimizer {
		cfg.Eta0, cfg.Workers = 0.05, 2
		o, _ := lsRun(t, cfg, mx, pr, batch, seed)
		for range rounds {
			if err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return o
	}
	dsgd := run(Config{Algorithm: DSGD})
	zero := run(Config{Method: knobbed(t, heavyBallName, nil)})
	for i := range pr.m {
		if !equal32(zero.Node(i), dsgd.Node(i)) {
			t.Fatalf("μ = 0, node %d: x = %v, DSGD's %v", i, zero.Node(i), dsgd.Node(i))
		}
	}

	o := run(Config{Algorithm: heavyBallName, Method: heavyBall{Mu: 0.5}})
	c := o.Counters()
	if want := int64(pr.m * rounds * batch); c.Samples != want || c.StateFloats != pr.d {
		t.Fatalf("counters %+v, want %d samples and %d state floats", c, want, pr.d)
	}
	if want := SamplesAfter(heavyBall{}, rounds, Cost{Batch: batch}); c.Samples != int64(pr.m)*want {
		t.Fatalf("%d samples counted, SamplesAfter gives %d per node", c.Samples, want)
	}
	st, err := o.State()
	if err != nil {
		t.Fatal(err)
	}
	if st.Algorithm != heavyBallName || st.Slab("m") == nil || o.Direction(0) == nil {
		t.Fatalf("snapshot of %q with slab m %v, direction %v", st.Algorithm, st.Slab("m") != nil, o.Direction(0))
	}
	if equal32(o.Node(0), dsgd.Node(0)) {
		t.Fatal("μ = 0.5 took DSGD's steps")
	}
	if _, err := New(Config{Algorithm: DSGD, Method: heavyBall{}, StepSizes: StepSizes{Eta0: 0.1}}, mx, newLSSampler(pr, 1, 1), lsOracle{pr}, make([]float32, pr.d)); err == nil {
		t.Fatal("Algorithm naming another method than Method's: no error")
	}
}
