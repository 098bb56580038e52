package robust

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// aggCase is one node's neighbourhood: its vector, W's weights and what
// its neighbours sent.
type aggCase struct {
	own  []float32
	self float32
	ws   []float32
	vecs [][]float32
}

func (c aggCase) run(a Aggregator) []float32 {
	dst := make([]float32, len(c.own))
	a.Aggregate(dst, c.own, c.self, c.ws, c.vecs, &Scratch{})
	return dst
}

// randomCase draws a node with deg neighbours and p coordinates, with
// weights summing to 1.
func randomCase(rng *rand.Rand, deg, p int) aggCase {
	vec := func() []float32 {
		v := make([]float32, p)
		for k := range v {
			v[k] = float32(rng.NormFloat64())
		}
		return v
	}
	c := aggCase{own: vec(), ws: make([]float32, deg)}
	w := 1 / float32(deg+2)
	c.self = 1 - float32(deg)*w
	for n := range deg {
		c.ws[n] = w
		c.vecs = append(c.vecs, vec())
	}
	return c
}

func near(a, b []float32, tol float64) bool {
	for k := range a {
		if math.Abs(float64(a[k])-float64(b[k])) > tol {
			return false
		}
	}
	return len(a) == len(b)
}

// TestAggregateHandCases checks each rule on a small case worked by hand.
func TestAggregateHandCases(t *testing.T) {
	five := aggCase{own: []float32{1}, vecs: [][]float32{{5}, {2}, {100}, {-50}}}
	four := aggCase{own: []float32{1}, vecs: [][]float32{{3}, {10}, {2}}}
	// own 0, a neighbour at distance 5 (clipped to 1 at τ = 1) and one at 1.
	clip := aggCase{own: []float32{0, 0}, self: 0.5, ws: []float32{0.25, 0.25}, vecs: [][]float32{{3, 4}, {0, 1}}}
	// Distances 5, 1 and 2: the adaptive τ is 2, the second largest.
	adaptive := aggCase{own: []float32{0, 0}, self: 0.4, ws: []float32{0.2, 0.2, 0.2}, vecs: [][]float32{{3, 4}, {0, 1}, {2, 0}}}
	for _, tc := range []struct {
		name string
		a    Aggregator
		c    aggCase
		want []float32
	}{
		{"trim:1 of five", Trim{1}, five, []float32{8.0 / 3}},      // {-50, 1, 2, 5, 100} → {1, 2, 5}
		{"trim:2 of five", Trim{2}, five, []float32{2}},            // the median
		{"trim:0 of five", Trim{0}, five, []float32{58.0 / 5}},     // the plain mean
		{"median of five", Median{}, five, []float32{2}},           // odd count
		{"median of four", Median{}, four, []float32{2.5}},         // {1, 2, 3, 10}
		{"clip:1", Clip{1}, clip, []float32{0.15, 0.45}},           // 0.25·(0.6, 0.8) + 0.25·(0, 1)
		{"clip:10", Clip{10}, clip, []float32{0.75, 1.25}},         // nothing clipped: gossip
		{"clip adaptive", Clip{}, adaptive, []float32{0.64, 0.52}}, // 0.2·(1.2, 1.6) + 0.2·(0, 1) + 0.2·(2, 0)
		{"mean", Mean{}, clip, []float32{0.75, 1.25}},
	} {
		if got := tc.c.run(tc.a); !near(got, tc.want, 1e-5) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAggregateInvariants: clip:inf is plain gossip bit for bit, trim:0 the
// unweighted mean of a node and its neighbours, median and trim:b lie
// within the values' range, whatever the degree.
func TestAggregateInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for deg := range 10 {
		c := randomCase(rng, deg, 37)
		gossip, clipped := c.run(Mean{}), c.run(Clip{math.Inf(1)})
		if !slices.Equal(gossip, clipped) {
			t.Errorf("degree %d: clip:inf differs from gossip", deg)
		}
		// The mixing of an optimizer is the same kernel.
		mean := c.run(Trim{0})
		for k := range mean {
			s := float64(c.own[k])
			for _, v := range c.vecs {
				s += float64(v[k])
			}
			if want := float32(s / float64(deg+1)); mean[k] != want {
				t.Fatalf("degree %d: trim:0 coordinate %d = %v, want the mean %v", deg, k, mean[k], want)
			}
		}
		for _, a := range []Aggregator{Median{}, Trim{deg / 2}, Clip{0.3}, Clip{}} {
			got := c.run(a)
			for k, g := range got {
				lo, hi := c.own[k], c.own[k]
				for _, v := range c.vecs {
					lo, hi = min(lo, v[k]), max(hi, v[k])
				}
				if g < lo-1e-6 || g > hi+1e-6 {
					t.Fatalf("degree %d: %s coordinate %d = %v outside [%v, %v]", deg, a, k, g, lo, hi)
				}
			}
		}
	}
}

// TestClipBoundsPull: a neighbour however far pulls a node at most W_ij τ.
func TestClipBoundsPull(t *testing.T) {
	c := aggCase{own: []float32{1, 1}, self: 0.75, ws: []float32{0.25}, vecs: [][]float32{{1e30, -1e30}}}
	got := c.run(Clip{2})
	if d := vecDistance(got, c.own); math.Abs(d-0.5) > 1e-6 {
		t.Errorf("moved %v, want W_ij τ = 0.5", d)
	}
	nan := aggCase{own: []float32{1}, self: 0.5, ws: []float32{0.5}, vecs: [][]float32{{float32(math.NaN())}}}
	if got := nan.run(Clip{2}); got[0] != 1 {
		t.Errorf("a NaN neighbour gave %v, want the node's own 1", got)
	}
}

// TestTrimCheck: trim:b needs more than 2b vectors at every node, and the
// refusal names the node.
func TestTrimCheck(t *testing.T) {
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Star(5))) // leaves have one neighbour
	if err := (Trim{0}).Check(mx); err != nil {
		t.Errorf("trim:0: %v", err)
	}
	err := Trim{1}.Check(mx)
	if err == nil || !strings.Contains(err.Error(), "node 1 ") {
		t.Errorf("trim:1 on a star: %v, want a refusal naming node 1", err)
	}
}

// TestParseAggregate covers the flag forms, good and bad.
func TestParseAggregate(t *testing.T) {
	for spec, want := range map[string]string{"": "mean", "mean": "mean", "median": "median", "clip": "clip",
		"clip:0.5": "clip:0.5", "clip:inf": "clip:+Inf", "trim:0": "trim:0", "trim:3": "trim:3"} {
		a, err := ParseAggregate(spec)
		if err != nil || a.String() != want {
			t.Errorf("%q: %v, %v; want %s", spec, a, err, want)
		}
	}
	for _, spec := range []string{"avg", "clip:0", "clip:-1", "clip:x", "clip:nan", "trim", "trim:-1", "trim:1.5", "median:1", "mean:2"} {
		if _, err := ParseAggregate(spec); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
}
