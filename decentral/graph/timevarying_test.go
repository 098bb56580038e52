package graph

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkDoublyStochastic fails unless W is non-negative with rows and columns
// summing to 1 within 1e-12, and, when symmetric is set, W = Wᵀ exactly.
func checkDoublyStochastic(t *testing.T, name string, mx *Mixing, symmetric bool) {
	t.Helper()
	w := mx.Dense()
	m := len(w)
	for i := range m {
		row, col := 0.0, 0.0
		for j := range m {
			if w[i][j] < 0 {
				t.Fatalf("%s: W[%d][%d] = %v < 0", name, i, j, w[i][j])
			}
			if symmetric && w[i][j] != w[j][i] {
				t.Fatalf("%s: W[%d][%d] = %v, W[%d][%d] = %v: not symmetric", name, i, j, w[i][j], j, i, w[j][i])
			}
			row += w[i][j]
			col += w[j][i]
		}
		if math.Abs(row-1) > 1e-12 || math.Abs(col-1) > 1e-12 {
			t.Fatalf("%s: row %d sums to %v, column %d to %v", name, i, row, i, col)
		}
	}
	if symmetric && mx.Directed() {
		t.Fatalf("%s: symmetric W reported directed", name)
	}
}

// matMul returns a·b for dense square matrices.
func matMul(a, b [][]float64) [][]float64 {
	m := len(a)
	out := make([][]float64, m)
	for i := range out {
		out[i] = make([]float64, m)
		for k := range m {
			if a[i][k] == 0 {
				continue
			}
			for j := range m {
				out[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return out
}

// periodProduct returns W_{τ−1} ⋯ W_0 of e, densely.
func periodProduct(e *OnePeerExp) [][]float64 {
	p := e.Mixing(0).Dense()
	for k := 1; k < e.Period(); k++ {
		p = matMul(e.Mixing(k).Dense(), p)
	}
	return p
}

// TestExpMatrices: every W_t of the one-peer exponential graph is doubly
// stochastic, row i holds 1/2 on the diagonal and 1/2 at (i − 2^k) mod m,
// and each node sends to exactly one node, (i + 2^k) mod m, per round.
func TestExpMatrices(t *testing.T) {
	for _, tc := range []struct{ m, tau int }{{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {8, 3}, {16, 4}} {
		e, err := OnePeerExponential(tc.m)
		if err != nil {
			t.Fatal(err)
		}
		if e.Period() != tc.tau {
			t.Errorf("m = %d: period %d, want %d", tc.m, e.Period(), tc.tau)
		}
		for r := range 2 * e.Period() {
			name := fmt.Sprintf("exp m=%d t=%d", tc.m, r)
			w := e.Mixing(r)
			if w.Nodes() != tc.m || w.Name() != ExpTopology {
				t.Fatalf("%s: %d nodes, name %q", name, w.Nodes(), w.Name())
			}
			if w != e.Mixing(r+e.Period()) {
				t.Errorf("%s: W_t ≠ W_{t+τ}", name)
			}
			checkDoublyStochastic(t, name, w, false)
			shift := 1 << (r % tc.tau)
			dense := w.Dense()
			for i := range tc.m {
				peer := ((i-shift)%tc.m + tc.m) % tc.m
				if tc.m == 1 {
					if dense[0][0] != 1 || len(w.From(0)) != 0 || len(w.To(0)) != 0 || e.Peer(0, r) != 0 {
						t.Fatalf("%s: W = %v, want I", name, dense)
					}
					continue
				}
				if e.Peer(i, r) != peer {
					t.Errorf("%s: Peer(%d) = %d, want %d", name, i, e.Peer(i, r), peer)
				}
				for j, v := range dense[i] {
					want := 0.0
					if j == i || j == peer {
						want = 0.5
					}
					if v != want {
						t.Fatalf("%s: W[%d][%d] = %v, want %v", name, i, j, v, want)
					}
				}
				if !slices.Equal(w.From(i), []int{peer}) {
					t.Errorf("%s: From(%d) = %v, want [%d]", name, i, w.From(i), peer)
				}
				if to := w.To(i); !slices.Equal(to, []int{(i + shift) % tc.m}) {
					t.Errorf("%s: node %d sends to %v, want exactly [%d]", name, i, to, (i+shift)%tc.m)
				}
			}
		}
		if n := testing.AllocsPerRun(100, func() { _ = e.Mixing(7) }); n != 0 {
			t.Errorf("m = %d: Mixing allocates %v times", tc.m, n)
		}
	}
	for _, m := range []int{0, -3} {
		if _, err := OnePeerExponential(m); err == nil || !strings.Contains(err.Error(), fmt.Sprint(m)) {
			t.Errorf("OnePeerExponential(%d): error %v", m, err)
		}
	}
}

// TestExpLambda: a period of the exponential graph averages exactly when m
// is a power of two (λ = 0, though a single W_t has λ = 1), contracts
// strictly otherwise, and Lambda is ‖W_{τ−1}⋯W_0 − J‖₂^{1/τ}.
func TestExpLambda(t *testing.T) {
	for _, m := range []int{1, 2, 4, 8, 16, 64} {
		e, _ := OnePeerExponential(m)
		for i, row := range periodProduct(e) {
			for j, v := range row {
				if v != 1/float64(m) {
					t.Fatalf("m = %d: one period's product [%d][%d] = %v, want 1/m exactly", m, i, j, v)
				}
			}
		}
		lam, err := e.Lambda(1000)
		if err != nil || lam > 1e-12 {
			t.Errorf("m = %d: Lambda = %v, %v, want 0", m, lam, err)
		}
		if m >= 4 {
			if l1 := e.Mixing(1).Lambda(); math.Abs(l1-1) > 1e-9 {
				t.Errorf("m = %d: λ(W_1) = %v, want 1 (two unmixed cycles)", m, l1)
			}
		}
	}
	for _, m := range []int{3, 5, 6, 7, 12, 37} {
		e, _ := OnePeerExponential(m)
		lam, err := e.Lambda(50)
		if err != nil || !(lam > 0 && lam < 1) {
			t.Errorf("m = %d: Lambda = %v, %v, want in (0, 1)", m, lam, err)
			continue
		}
		// Independently: the largest singular value of the product minus J,
		// from the eigenvalues of AᵀA (mat.Norm(·, 2) is Frobenius's).
		p := periodProduct(e)
		a := mat.NewDense(m, m, nil)
		for i := range m {
			for j := range m {
				a.Set(i, j, p[i][j]-1/float64(m))
			}
		}
		var ata mat.SymDense
		ata.SymOuterK(1, a.T())
		var es mat.EigenSym
		if !es.Factorize(&ata, false) {
			t.Fatal("eigendecomposition failed")
		}
		want := math.Pow(math.Sqrt(slices.Max(es.Values(nil))), 1/float64(e.Period()))
		if math.Abs(lam-want) > 1e-12 {
			t.Errorf("m = %d: Lambda = %v, want %v", m, lam, want)
		}
		// The Lanczos path used above denseSpectrumMax agrees.
		sigma, err := e.periodNormSparse()
		if err != nil {
			t.Fatal(err)
		}
		if got := math.Pow(sigma, 1/float64(e.Period())); math.Abs(got-lam) > 1e-9 {
			t.Errorf("m = %d: sparse λ %v, dense %v", m, got, lam)
		}
	}
	e, _ := OnePeerExponential(64)
	if sigma, err := e.periodNormSparse(); err != nil || sigma > 1e-9 {
		t.Errorf("m = 64: sparse period norm %v, %v, want 0", sigma, err)
	}
	if _, err := e.Lambda(0); err == nil {
		t.Error("Lambda(0) succeeded")
	}
}

// linkDropBases are the static graphs the link-drop tests fail links of.
func linkDropBases() map[string]*Graph {
	return map[string]*Graph{
		"er":   mustGraph(ErdosRenyi(12, 0.4, 3)),
		"ring": mustGraph(Ring(10)),
	}
}

// TestLinkDropMatrices: every W_t under link failures is the symmetric,
// doubly stochastic mixing matrix (Metropolis–Hastings or Laplacian) of a
// subgraph of the base.
func TestLinkDropMatrices(t *testing.T) {
	for bname, base := range linkDropBases() {
		for _, tc := range []struct {
			kind string
			p    float64
		}{{MixMetropolis, 0}, {MixMetropolis, 0.3}, {MixMetropolis, 0.9}, {MixLaplacian, 0.3}} {
			kind, p := tc.kind, tc.p
			l, err := NewLinkDrop(base, kind, p, 11)
			if err != nil {
				t.Fatal(err)
			}
			for r := range 50 {
				name := fmt.Sprintf("%s %s p=%v t=%d", bname, kind, p, r)
				w := l.Mixing(r)
				if w != l.Mixing(r) {
					t.Fatalf("%s: Mixing(t) twice gave two matrices", name)
				}
				checkDoublyStochastic(t, name, w, true)
				g := w.Graph()
				if g.N != base.N || w.Name() != kind {
					t.Fatalf("%s: %d nodes, name %q", name, g.N, w.Name())
				}
				want, err := NewMixing(kind, g)
				if err != nil {
					t.Fatal(err)
				}
				dense, wd := w.Dense(), want.Dense()
				for i := range dense {
					if !slices.Equal(dense[i], wd[i]) {
						t.Fatalf("%s: row %d = %v, want the surviving graph's row %v", name, i, dense[i], wd[i])
					}
				}
				for _, e := range g.Edges {
					if !base.HasEdge(e[0], e[1]) {
						t.Fatalf("%s: edge %v not in the base graph", name, e)
					}
				}
				if len(g.Edges) == 0 {
					for i := range dense {
						if dense[i][i] != 1 {
							t.Fatalf("%s: no edge survives and W ≠ I", name)
						}
					}
				}
			}
		}
	}
	// A lone node: W = I.
	l, err := NewLinkDrop(mustGraph(Ring(1)), MixMetropolis, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Mixing(3).Dense(); d[0][0] != 1 {
		t.Errorf("one node: W = %v", d)
	}
}

// TestLinkDropCounterBased: W_t is a pure function of (seed, t) — the same
// seed gives the same matrices in any order, another seed others — and
// p = 0 gives the base graph's Metropolis–Hastings matrix exactly.
func TestLinkDropCounterBased(t *testing.T) {
	base := linkDropBases()["er"]
	a, _ := NewLinkDrop(base, MixMetropolis, 0.3, 42)
	b, _ := NewLinkDrop(base, MixMetropolis, 0.3, 42)
	c, _ := NewLinkDrop(base, MixMetropolis, 0.3, 43)
	const rounds = 50
	inOrder := make([][][]float64, rounds)
	for r := range rounds {
		inOrder[r] = a.Mixing(r).Dense()
	}
	differ := 0
	for k := range rounds {
		r := (k*17 + 5) % rounds // a permutation of 0..49
		if !denseEqual(b.Mixing(r).Dense(), inOrder[r]) {
			t.Fatalf("round %d asked out of order differs from in order", r)
		}
		if !denseEqual(c.Mixing(r).Dense(), inOrder[r]) {
			differ++
		}
	}
	if differ < rounds/2 {
		t.Errorf("seeds 42 and 43 gave different W_t in only %d of %d rounds", differ, rounds)
	}
	// Asking again after other rounds still gives the same matrix.
	if !denseEqual(a.Mixing(3).Dense(), inOrder[3]) {
		t.Error("W_3 changed when asked again")
	}

	for bname, g := range linkDropBases() {
		l, _ := NewLinkDrop(g, MixMetropolis, 0, 7)
		want := mustMixing(t, MixMetropolis, g).Dense()
		for r := range 5 {
			if !denseEqual(l.Mixing(r).Dense(), want) {
				t.Errorf("%s p=0 round %d: W differs from the base graph's MH matrix", bname, r)
			}
		}
		if l.Mixing(0) != l.Mixing(4) {
			t.Errorf("%s p=0: rounds get different matrices, want the base's every round", bname)
		}
	}
}

func denseEqual(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestLinkDropSurvival: over many rounds the fraction of surviving edges is
// 1 − p within 5 binomial standard deviations.
func TestLinkDropSurvival(t *testing.T) {
	base := mustGraph(ErdosRenyi(30, 0.3, 4))
	const rounds = 200
	for _, p := range []float64{0.1, 0.3, 0.9} {
		l, _ := NewLinkDrop(base, MixMetropolis, p, 5)
		alive := 0
		for r := range rounds {
			alive += len(l.Mixing(r).Graph().Edges)
		}
		n := float64(rounds * len(base.Edges))
		frac := float64(alive) / n
		sigma := math.Sqrt(p * (1 - p) / n)
		if math.Abs(frac-(1-p)) > 5*sigma {
			t.Errorf("p = %v: %.4f of %v edge-rounds survived, want %.4f ± %.4f", p, frac, n, 1-p, 5*sigma)
		}
	}
}

// TestLinkDropLambda: Lambda is the mean of λ(W_t) over the first
// min(rounds, LinkDropLambdaRounds) rounds, and leaves Mixing's cache alone.
func TestLinkDropLambda(t *testing.T) {
	base := mustGraph(ErdosRenyi(10, 0.4, 8))
	l, _ := NewLinkDrop(base, MixMetropolis, 0.3, 9)
	w5 := l.Mixing(5)
	for _, rounds := range []int{1, 30, 500} {
		got, err := l.Lambda(rounds)
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := NewLinkDrop(base, MixMetropolis, 0.3, 9)
		n := min(rounds, LinkDropLambdaRounds)
		want := 0.0
		for r := range n {
			want += fresh.Mixing(r).Lambda()
		}
		want /= float64(n)
		if math.Abs(got-want) > 1e-12 || !(got > 0 && got <= 1) {
			t.Errorf("Lambda(%d) = %v, want the mean %v of %d rounds", rounds, got, want, n)
		}
	}
	if l.Mixing(5) != w5 {
		t.Error("Lambda replaced the cached W_t")
	}
	if _, err := l.Lambda(0); err == nil {
		t.Error("Lambda(0) succeeded")
	}
	// No failures: λ of the base graph itself.
	l0, _ := NewLinkDrop(base, MixMetropolis, 0, 9)
	if got, _ := l0.Lambda(10); math.Abs(got-mustMixing(t, MixMetropolis, base).Lambda()) > 1e-12 {
		t.Errorf("p = 0: Lambda %v, want the base graph's λ", got)
	}
}

func TestLinkDropErrors(t *testing.T) {
	base := mustGraph(Ring(5))
	for _, p := range []float64{-0.1, 1, 1.5, math.NaN(), math.Inf(1)} {
		_, err := NewLinkDrop(base, MixMetropolis, p, 1)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprint(p)) {
			t.Errorf("p = %v: error %v, want one naming the value", p, err)
		}
	}
	if _, err := NewLinkDrop(nil, MixMetropolis, 0.1, 1); err == nil {
		t.Error("nil base graph accepted")
	}
	if _, err := NewLinkDrop(&Graph{N: 3}, MixMetropolis, 0.1, 1); err == nil {
		t.Error("a graph not built by New accepted")
	}
}
