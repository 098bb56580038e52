package graph

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

// generators lists the deterministic generators by name.
var generators = []struct {
	name string
	make func(int) (*Graph, error)
}{{"ring", Ring}, {"path", Path}, {"complete", Complete}, {"star", Star}, {"torus", Torus}}

// denseLaplacian returns the eigenvalues of g's Laplacian in increasing
// order, from the dense eigenvalue solver.
func denseLaplacian(t *testing.T, g *Graph) []float64 {
	t.Helper()
	ev, err := eigenvalues(laplacian(g), g.N)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// generic returns a copy of g that no generator made, as an edge list gives.
func generic(g *Graph) *Graph { return mustGraph(New(g.N, g.Edges)) }

// The closed forms of λ_max(L), μ_2 and λ agree with a dense
// eigendecomposition for every generator, small sides of the torus
// included, under both mixings.
func TestClosedSpectrum(t *testing.T) {
	for _, gen := range generators {
		for _, m := range []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 16, 20, 21, 25, 36, 49, 50, 64} {
			g := mustGraph(gen.make(m))
			label := fmt.Sprintf("%s%d", gen.name, m)
			s, ok := closedSpectrum(g)
			if !ok {
				t.Fatalf("%s: no closed form", label)
			}
			if _, ok := closedSpectrum(generic(g)); ok {
				t.Fatalf("%s: an edge-list copy got a closed form", label)
			}
			ev := denseLaplacian(t, g)
			if math.Abs(s.max-ev[m-1]) > 1e-9 || math.Abs(s.fiedler-ev[1]) > 1e-9 {
				t.Errorf("%s: μ_2 = %.15g, μ_max = %.15g; dense %.15g, %.15g", label, s.fiedler, s.max, ev[1], ev[m-1])
			}
			regular := true
			for i := 0; i < m; i++ {
				regular = regular && g.Degree(i) == g.Degree(0)
			}
			if regular != (s.degree >= 0) || regular && s.degree != g.Degree(0) {
				t.Errorf("%s: degree %d, graph regular %v with degree %d", label, s.degree, regular, g.Degree(0))
			}
			for _, kind := range []string{MixLaplacian, MixMetropolis} {
				mx := mustMixing(t, kind, g)
				dense, err := mx.lambdaDense()
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(mx.Lambda()-dense) > 1e-9 {
					t.Errorf("%s %s: λ = %.15f, dense %.15f", label, kind, mx.Lambda(), dense)
				}
				// The weights agree with those of the generic path.
				ref := mustMixing(t, kind, generic(g))
				for i := 0; i < m; i++ {
					a, an := mx.Row(i)
					b, bn := ref.Row(i)
					if math.Abs(a-b) > 1e-12 {
						t.Fatalf("%s %s: W[%d][%d] = %v, generic %v", label, kind, i, i, a, b)
					}
					for k := range an {
						if math.Abs(an[k]-bn[k]) > 1e-12 {
							t.Fatalf("%s %s: row %d weight %d = %v, generic %v", label, kind, i, k, an[k], bn[k])
						}
					}
				}
			}
		}
	}
}

// A generator's label is ignored when the edges contradict it.
func TestClosedSpectrumGuard(t *testing.T) {
	g := mustGraph(Ring(6))
	forged := mustGraph(New(6, g.Edges[1:])) // a path on 6 nodes
	forged.kind = "ring"
	if _, ok := closedSpectrum(forged); ok {
		t.Fatal("a 5-edge graph labelled ring got the ring's closed form")
	}
	mx := mustMixing(t, MixLaplacian, forged)
	dense, _ := mx.lambdaDense()
	if math.Abs(mx.Lambda()-dense) > 1e-12 {
		t.Errorf("λ = %v, dense %v", mx.Lambda(), dense)
	}
	if g := mustGraph(ErdosRenyi(2, 1, 1)); g.Generator() != "er" {
		t.Errorf("Generator() = %q for ErdosRenyi", g.Generator())
	}
	if g := generic(mustGraph(Torus(9))); g.Generator() != "" {
		t.Errorf("Generator() = %q for New", g.Generator())
	}
}

// spectrumGraphs returns graphs without a closed form: Erdős–Rényi graphs,
// edge-list copies of the generators (complete and star have so few distinct
// eigenvalues that Lanczos breaks down and must restart from a new
// direction), an edge list with a bottleneck, a disconnected graph, and
// tiny ones.
func spectrumGraphs(t *testing.T) map[string]*Graph {
	t.Helper()
	gs := map[string]*Graph{}
	for _, c := range []struct {
		m  int
		pc float64
	}{{12, 0.4}, {40, 0.2}, {150, 0.05}, {300, 0.03}, {300, 0.3}} {
		for seed := uint64(1); seed <= 2; seed++ {
			gs[fmt.Sprintf("er%d-%v-%d", c.m, c.pc, seed)] = mustGraph(ErdosRenyi(c.m, c.pc, seed))
		}
	}
	for _, gen := range generators {
		for _, m := range []int{2, 3, 97, 98, 160, 250} {
			gs[fmt.Sprintf("%s%d-edgelist", gen.name, m)] = generic(mustGraph(gen.make(m)))
		}
	}
	// Two 30-cliques joined by a 40-node path: a small spectral gap.
	var b strings.Builder
	for c := 0; c < 2; c++ {
		for i := 0; i < 30; i++ {
			for j := i + 1; j < 30; j++ {
				fmt.Fprintf(&b, "%d %d\n", c*70+i, c*70+j)
			}
		}
	}
	for i := 29; i < 70; i++ {
		fmt.Fprintf(&b, "%d %d\n", i, i+1)
	}
	barbell, err := ParseEdgeList(strings.NewReader(b.String()), "barbell")
	if err != nil {
		t.Fatal(err)
	}
	gs["barbell-edgelist"] = barbell
	a := mustGraph(ErdosRenyi(120, 0.1, 3))
	edges := append([][2]int(nil), a.Edges...)
	for _, e := range a.Edges {
		edges = append(edges, [2]int{e[0] + 120, e[1] + 120})
	}
	gs["two-er120-components"] = mustGraph(New(240, edges))
	return gs
}

// Lanczos agrees with the dense eigendecomposition on λ_max(L), μ_2 and λ
// under both mixings.
func TestLanczosMatchesDense(t *testing.T) {
	if raceEnabled {
		t.Skip("single-goroutine eigenvalue numerics: nothing for the race detector, 10× slower under it (the plain go test ./... runs it)")
	}
	for name, g := range spectrumGraphs(t) {
		ev := denseLaplacian(t, g)
		m := g.N
		tol := 1e-9 * max(1, ev[m-1])
		lo, hi, err := lanczos(m, laplacianOp(g), wantBoth)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Abs(hi-ev[m-1]) > tol || math.Abs(lo-ev[1]) > tol {
			t.Errorf("%s: Lanczos μ_2 = %.15g, μ_max = %.15g; dense %.15g, %.15g", name, lo, hi, ev[1], ev[m-1])
		}
		if _, hi, _ := lanczos(m, laplacianOp(g), wantHigh); math.Abs(hi-ev[m-1]) > tol {
			t.Errorf("%s: Lanczos μ_max = %.15g alone, dense %.15g", name, hi, ev[m-1])
		}
		if lo, _, _ := lanczos(m, laplacianOp(g), wantLow); math.Abs(lo-ev[1]) > tol {
			t.Errorf("%s: Lanczos μ_2 = %.15g alone, dense %.15g", name, lo, ev[1])
		}
		for _, kind := range []string{MixLaplacian, MixMetropolis} {
			mx := mustMixing(t, kind, g)
			dense, err := mx.lambdaDense()
			if err != nil {
				t.Fatal(err)
			}
			sparse, err := mx.lambdaSparse()
			if err != nil {
				t.Fatalf("%s %s: %v", name, kind, err)
			}
			if math.Abs(sparse-dense) > 1e-9 || math.Abs(mx.Lambda()-dense) > 1e-9 {
				t.Errorf("%s %s: λ sparse %.15f, Lambda() %.15f, dense %.15f", name, kind, sparse, mx.Lambda(), dense)
			}
		}
	}
}

func TestLanczosErrors(t *testing.T) {
	if raceEnabled {
		t.Skip("single-goroutine eigenvalue numerics: nothing for the race detector, 10× slower under it (the plain go test ./... runs it)")
	}
	if _, _, err := lanczos(1, func(dst, src []float64) { copy(dst, src) }, wantHigh); err == nil {
		t.Error("lanczos accepted order 1")
	}
	// A ring of 3000 nodes as an edge list has a gap of ~1e-6: too small
	// for 200 products, and the error says so instead of a wrong λ.
	g := generic(mustGraph(Ring(3000)))
	_, _, err := lanczosN(g.N, laplacianOp(g), wantLow, 200)
	if err == nil || !strings.Contains(err.Error(), "no convergence in") {
		t.Errorf("error %v, want one about no convergence", err)
	}
}

// Generator graphs get λ in closed form however large: a 30,000-node ring
// builds both mixings without an m × m matrix.
func TestMixingLargeGenerators(t *testing.T) {
	const m = 30_000
	sin2 := func(x float64) float64 { return math.Sin(x) * math.Sin(x) }
	rows, cols := TorusShape(m) // 150 × 200
	tests := []struct {
		name        string
		g           *Graph
		lap, metro  float64 // λ, from the spectra
		metroClosed bool
	}{
		// Even ring: μ_max = 4, μ_2 = 4sin²(π/m).
		{"ring", mustGraph(Ring(m)), 1 - 2*sin2(math.Pi/m)/3, 1 - 4*sin2(math.Pi/m)/3, true},
		// Path: μ_k = 4sin²(πk/2m); Metropolis is not regular.
		{"path", mustGraph(Path(m)), 1 - 2*sin2(math.Pi/(2*m))/(3*sin2(math.Pi*(m-1)/(2*m))), 0, false},
		// Star: μ_2 = 1, μ_max = m.
		{"star", mustGraph(Star(m)), 1 - 2.0/(3*m), 0, false},
		// Torus 150 × 200: μ_max = 4 + 4, μ_2 = 4sin²(π/200); 4-regular.
		{"torus", mustGraph(Torus(m)), 1 - 2*4*sin2(math.Pi/float64(cols))/(3*8), 1 - 4*sin2(math.Pi/float64(cols))/5, true},
	}
	if rows != 150 || cols != 200 {
		t.Fatalf("TorusShape(%d) = %d × %d", m, rows, cols)
	}
	for _, tc := range tests {
		for _, kind := range []string{MixLaplacian, MixMetropolis} {
			if kind == MixMetropolis && !tc.metroClosed {
				continue
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			mx, err := NewMixing(kind, tc.g)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.name, kind, err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Errorf("%s %s: allocated %d MiB", tc.name, kind, grew>>20)
			}
			want := tc.lap
			if kind == MixMetropolis {
				want = tc.metro
			}
			if math.Abs(mx.Lambda()-want) > 1e-12 || mx.Lambda() >= 1 {
				t.Errorf("%s %s: λ = %.16f, want %.16f", tc.name, kind, mx.Lambda(), want)
			}
		}
	}
}

// Above denseSpectrumMax, graphs without a closed form go through Lanczos:
// edge-list copies of generators agree with the closed forms.
func TestMixingSparseGeneric(t *testing.T) {
	if raceEnabled {
		t.Skip("single-goroutine eigenvalue numerics: nothing for the race detector, 10× slower under it (the plain go test ./... runs it)")
	}
	sizes := []int{1000, 4096}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, m := range sizes {
		for _, name := range []string{"ring", "torus", "star"} {
			var gen func(int) (*Graph, error)
			for _, g := range generators {
				if g.name == name {
					gen = g.make
				}
			}
			g := mustGraph(gen(m))
			if name == "ring" && m > 1000 {
				continue // a gap of 1e-6: slow, covered at m = 1000
			}
			for _, kind := range []string{MixLaplacian, MixMetropolis} {
				closed := mustMixing(t, kind, g)
				sparse := mustMixing(t, kind, generic(g))
				if math.Abs(closed.Lambda()-sparse.Lambda()) > 1e-9 {
					t.Errorf("%s%d %s: λ sparse %.15f, closed form %.15f", name, m, kind, sparse.Lambda(), closed.Lambda())
				}
				self, _ := closed.Row(0)
				if s, _ := sparse.Row(0); math.Abs(s-self) > 1e-12 {
					t.Errorf("%s%d %s: W[0][0] sparse %v, closed form %v", name, m, kind, s, self)
				}
			}
		}
	}
}

// An Erdős–Rényi graph of 800 nodes: NewMixing takes the sparse path and
// agrees with a dense eigendecomposition (several seconds: not in -short).
func TestMixingSparseER(t *testing.T) {
	if testing.Short() {
		t.Skip("dense reference eigendecompositions of 800 × 800 matrices")
	}
	const m = 800 // above denseSpectrumMax, so the sparse solver runs
	g := mustGraph(ErdosRenyi(m, 15.0/(m-1), 4))
	ev := denseLaplacian(t, g)
	top, err := laplacianMax(g)
	if err != nil || math.Abs(top-ev[m-1]) > 1e-9*ev[m-1] {
		t.Fatalf("λ_max(L) = %.15g (%v), dense %.15g", top, err, ev[m-1])
	}
	for _, kind := range []string{MixLaplacian, MixMetropolis} {
		mx := mustMixing(t, kind, g)
		dense, err := mx.lambdaDense()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(mx.Lambda()-dense) > 1e-9 {
			t.Errorf("%s: λ = %.15f, dense %.15f", kind, mx.Lambda(), dense)
		}
	}
}
