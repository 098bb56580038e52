package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkMixing asserts SPEC §2: W symmetric, doubly stochastic, positive
// exactly on the edges and the diagonal, and λ < 1 (the graph is
// connected) agreeing with power iteration on W − 11ᵀ/m.
func checkMixing(t *testing.T, label string, mx *Mixing) {
	t.Helper()
	g := mx.Graph()
	w := mx.Dense()
	m := g.N
	for i := 0; i < m; i++ {
		row := 0.0
		for j := 0; j < m; j++ {
			if w[i][j] != w[j][i] {
				t.Fatalf("%s: W[%d][%d] = %v ≠ W[%d][%d] = %v", label, i, j, w[i][j], j, i, w[j][i])
			}
			onSupport := i == j || g.HasEdge(i, j)
			if onSupport != (w[i][j] > 0) || w[i][j] < 0 {
				t.Fatalf("%s: W[%d][%d] = %v, edge %v", label, i, j, w[i][j], g.HasEdge(i, j))
			}
			row += w[i][j]
		}
		if math.Abs(row-1) > 1e-12 {
			t.Fatalf("%s: row %d sums to %v", label, i, row)
		}
		self, nb := mx.Row(i)
		if self != w[i][i] || len(nb) != g.Degree(i) {
			t.Fatalf("%s: Row(%d) disagrees with Dense", label, i)
		}
	}
	lam := mx.Lambda()
	if !(lam >= 0 && lam < 1-1e-9) {
		t.Fatalf("%s: λ = %v, want in [0, 1) for a connected graph", label, lam)
	}
	if m > 1 {
		if pi := powerLambda(w); math.Abs(pi-lam) > 1e-4 {
			t.Fatalf("%s: λ = %.8f, power iteration gives %.8f", label, lam, pi)
		}
	}
}

// powerLambda estimates the spectral radius of W − 11ᵀ/m, which is λ for a
// symmetric doubly stochastic W, by power iteration on its square.
func powerLambda(w [][]float64) float64 {
	m := len(w)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, m)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	apply := func(dst, src []float64) {
		mean := 0.0
		for _, v := range src {
			mean += v
		}
		mean /= float64(m)
		for i := range dst {
			s := -mean
			for j, v := range src {
				s += w[i][j] * v
			}
			dst[i] = s
		}
	}
	y, z := make([]float64, m), make([]float64, m)
	est := 0.0
	for it := 0; it < 5000; it++ {
		apply(y, x)
		apply(z, y)
		num, den := 0.0, 0.0
		for i := range x {
			num += x[i] * z[i]
			den += x[i] * x[i]
		}
		est = math.Sqrt(num / den)
		norm := 0.0
		for _, v := range z {
			norm += v * v
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			return 0
		}
		for i := range x {
			x[i] = z[i] / norm
		}
	}
	return est
}

func TestMixingProperties(t *testing.T) {
	if raceEnabled {
		t.Skip("single-goroutine eigenvalue numerics: nothing for the race detector, 10× slower under it (the plain go test ./... runs it)")
	}
	var graphs []*Graph
	var names []string
	for _, m := range []int{2, 3, 4, 5, 9, 12, 16} {
		for _, gen := range []struct {
			name string
			f    func(int) (*Graph, error)
		}{{"ring", Ring}, {"path", Path}, {"complete", Complete}, {"star", Star}, {"torus", Torus}} {
			graphs = append(graphs, mustGraph(gen.f(m)))
			names = append(names, fmt.Sprintf("%s%d", gen.name, m))
		}
	}
	for seed := uint64(0); seed < 20; seed++ {
		for _, c := range []struct {
			m  int
			pc float64
		}{{5, 0.5}, {10, 0.35}, {10, 0.9}, {25, 0.3}} {
			graphs = append(graphs, mustGraph(ErdosRenyi(c.m, c.pc, seed)))
			names = append(names, fmt.Sprintf("er%d-%v-seed%d", c.m, c.pc, seed))
		}
	}
	for k, g := range graphs {
		for _, kind := range []string{MixLaplacian, MixMetropolis} {
			mx, err := NewMixing(kind, g)
			if err != nil {
				t.Fatalf("%s %s: %v", names[k], kind, err)
			}
			if mx.Name() != kind || mx.Nodes() != g.N {
				t.Fatalf("%s: name %q, %d nodes", names[k], mx.Name(), mx.Nodes())
			}
			checkMixing(t, names[k]+" "+kind, mx)
		}
	}
}

func TestLaplacianMixingClosedForms(t *testing.T) {
	// Complete graph: L has eigenvalues 0 and m, so W = I/3 + 2J/(3m), λ = 1/3.
	for _, m := range []int{3, 7, 20} {
		mx := mustMixing(t, MixLaplacian, mustGraph(Complete(m)))
		if math.Abs(mx.Lambda()-1.0/3) > 1e-12 {
			t.Errorf("complete %d: λ = %v, want 1/3", m, mx.Lambda())
		}
		self, nb := mx.Row(0)
		if math.Abs(self-(1.0/3+2/(3*float64(m)))) > 1e-12 || math.Abs(nb[0]-2/(3*float64(m))) > 1e-12 {
			t.Errorf("complete %d: row 0 = %v, %v", m, self, nb)
		}
	}
	// Even ring: λ_max(L) = 4, λ = max(1 − (1 − cos(2π/m))/3, 1/3).
	for _, m := range []int{4, 6, 10, 30} {
		mx := mustMixing(t, MixLaplacian, mustGraph(Ring(m)))
		want := max(1-(1-math.Cos(2*math.Pi/float64(m)))/3, 1.0/3)
		if math.Abs(mx.Lambda()-want) > 1e-12 {
			t.Errorf("ring %d: λ = %.15f, want %.15f", m, mx.Lambda(), want)
		}
	}
}

func TestMetropolisWeights(t *testing.T) {
	// Star on 5 nodes: centre degree 4, leaves 1: every edge 1/5.
	mx := mustMixing(t, MixMetropolis, mustGraph(Star(5)))
	self, nb := mx.Row(0)
	if math.Abs(self-0.2) > 1e-15 || nb[0] != 0.2 {
		t.Errorf("star centre row: %v %v, want 0.2 everywhere", self, nb)
	}
	self, nb = mx.Row(3)
	if math.Abs(self-0.8) > 1e-15 || nb[0] != 0.2 {
		t.Errorf("star leaf row: %v %v, want 0.8, 0.2", self, nb)
	}
}

func TestMixingEdgeCases(t *testing.T) {
	one := mustGraph(Ring(1))
	for _, kind := range []string{MixLaplacian, MixMetropolis} {
		mx := mustMixing(t, kind, one)
		if w := mx.Dense(); w[0][0] != 1 || mx.Lambda() != 0 {
			t.Errorf("%s on one node: W = %v, λ = %v", kind, w, mx.Lambda())
		}
		// Two components: W is still doubly stochastic but λ = 1.
		split, _ := New(4, [][2]int{{0, 1}, {2, 3}})
		mx = mustMixing(t, kind, split)
		if math.Abs(mx.Lambda()-1) > 1e-9 {
			t.Errorf("%s on a disconnected graph: λ = %v, want 1", kind, mx.Lambda())
		}
	}
	if _, err := NewMixing("uniform", one); err == nil || !strings.Contains(err.Error(), `"uniform"`) {
		t.Errorf("unknown mixing: error %v", err)
	}
	if _, err := LaplacianMixing(&Graph{N: 3}); err == nil {
		t.Error("LaplacianMixing accepted a graph not built by New")
	}
}
