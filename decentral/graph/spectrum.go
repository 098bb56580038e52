package graph

import (
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// How the spectral quantities of a graph — λ_max(L) for the Laplacian mixing
// and λ = max(|λ_2(W)|, |λ_m(W)|) — are computed, cheapest first:
//
//   - in closed form when a generator built the graph (see closedSpectrum),
//     for any m;
//   - by a dense O(m³) eigendecomposition of the m × m matrix when
//     m ≤ denseSpectrumMax;
//   - otherwise by thick-restart Lanczos iteration on the sparse rows, in
//     O(|E| + b·m) time per product and O(b·m) memory, b ≤ lanczosMaxBasis.
const (
	// denseSpectrumMax is the largest node count whose spectrum comes from
	// gonum's dense EigenSym, exact and immune to small spectral gaps.
	// Measured per decomposition on one core: 15–25 ms at m = 300, 50 ms
	// at m = 500, 0.4–0.5 s at m = 1000 (O(m³), and 16·m² bytes), against
	// 3–15 ms for Lanczos on an Erdős–Rényi graph of mean degree 20 at the
	// same sizes; but 0.1 s for Lanczos on a 600-node path, whose gap is
	// tiny. Up to 500 nodes dense costs little and is never slow.
	denseSpectrumMax = 500

	// lanczosMaxBasis bounds the Lanczos basis; lanczosBasisBytes bounds its
	// memory, 8·b·m bytes, for very large m (but b ≥ lanczosMinBasis).
	lanczosMaxBasis   = 96
	lanczosMinBasis   = 24
	lanczosBasisBytes = 256 << 20

	// lanczosTol is the residual ‖A y − θ y‖ a wanted Ritz pair must reach,
	// relative to max(1, spectral radius); it bounds the eigenvalue error.
	lanczosTol = 1e-11

	// lanczosMaxProducts bounds the matrix–vector products of one solve: a
	// graph with a tiny spectral gap (a path or ring of many thousand nodes
	// read from a file) fails with an error instead of running for hours.
	lanczosMaxProducts = 20000

	// lanczosStream seeds Lanczos' start vectors, so results are
	// reproducible.
	lanczosStream = 0x6c616e63_7a6f7321 // "lanczos!"
)

// lapSpectrum is the part of a graph Laplacian's spectrum the mixings need:
// μ_2, the smallest eigenvalue on the complement of the all-ones vector
// (positive exactly when the graph is connected), and μ_max, the largest.
// degree is the common degree of a regular graph, or -1.
type lapSpectrum struct {
	fiedler, max float64
	degree       int
}

// closedSpectrum returns the Laplacian spectrum of a graph built by the ring,
// path, complete, star or torus generator, from the known spectra:
//
//	ring   μ_k = 2 − 2cos(2πk/m) = 4sin²(πk/m)
//	path   μ_k = 2 − 2cos(πk/m)  = 4sin²(πk/2m)
//	compl. {0, m}
//	star   {0, 1, m}
//	torus  sums of the spectra of its two sides, each a ring as Ring builds
//	       it (a side of 1 is a lone node, a side of 2 a single edge)
//
// It reports false for any other graph, for a graph without edges, and for
// one whose edge count contradicts its generator.
func closedSpectrum(g *Graph) (lapSpectrum, bool) {
	m := g.N
	if len(g.Edges) == 0 {
		return lapSpectrum{}, false
	}
	var (
		s     lapSpectrum
		edges int
	)
	switch {
	case m == 2 && g.kind != "" && g.kind != "er":
		// Every generator gives the single edge K₂: spectrum {0, 2}.
		s, edges = lapSpectrum{2, 2, 1}, 1
	case g.kind == "ring":
		s, edges = cycleSpectrum(m), m
	case g.kind == "path":
		x := math.Pi / (2 * float64(m))
		s, edges = lapSpectrum{4 * sq(detmath.Sin(x)), 4 * sq(detmath.Cos(x)), -1}, m-1
	case g.kind == "complete":
		s, edges = lapSpectrum{float64(m), float64(m), m - 1}, m*(m-1)/2
	case g.kind == "star":
		s, edges = lapSpectrum{1, float64(m), -1}, m-1
	case g.kind == "torus":
		rows, cols := TorusShape(m)
		a, b := cycleSpectrum(rows), cycleSpectrum(cols)
		s = lapSpectrum{b.fiedler, a.max + b.max, a.degree + b.degree}
		if rows > 1 {
			s.fiedler = min(a.fiedler, b.fiedler)
		}
		edges = m * s.degree / 2
	default:
		return lapSpectrum{}, false
	}
	if len(g.Edges) != edges {
		return lapSpectrum{}, false
	}
	return s, true
}

// cycleSpectrum returns the Laplacian spectrum of Ring(n): {0} for n = 1,
// {0, 2} for n = 2, 4sin²(πk/n) for n ≥ 3.
func cycleSpectrum(n int) lapSpectrum {
	switch n {
	case 1:
		return lapSpectrum{0, 0, 0}
	case 2:
		return lapSpectrum{2, 2, 1}
	}
	return lapSpectrum{
		fiedler: 4 * sq(detmath.Sin(math.Pi/float64(n))),
		max:     4 * sq(detmath.Sin(math.Pi*float64(n/2)/float64(n))),
		degree:  2,
	}
}

func sq(x float64) float64 { return x * x }

// laplacianMax returns λ_max(L) of g, which has at least one edge.
func laplacianMax(g *Graph) (float64, error) {
	if s, ok := closedSpectrum(g); ok {
		return s.max, nil
	}
	m := g.N
	if m <= denseSpectrumMax {
		ev, err := eigenvalues(laplacian(g), m)
		if err != nil {
			return 0, err
		}
		return ev[m-1], nil
	}
	_, hi, err := lanczos(m, laplacianOp(g), wantHigh)
	if err != nil {
		return 0, fmt.Errorf("λ_max of the Laplacian of a %d-node graph: %w", m, err)
	}
	return hi, nil
}

// laplacian returns the Laplacian L = D − A of g, dense and row-major.
func laplacian(g *Graph) []float64 {
	m := g.N
	lap := make([]float64, m*m)
	for i := range m {
		lap[i*m+i] = float64(g.Degree(i))
	}
	for _, e := range g.Edges {
		lap[e[0]*m+e[1]], lap[e[1]*m+e[0]] = -1, -1
	}
	return lap
}

// laplacianOp returns dst = L src for the Laplacian L = D − A of g.
func laplacianOp(g *Graph) func(dst, src []float64) {
	return func(dst, src []float64) {
		for i, nb := range g.adj {
			s := float64(len(nb)) * src[i]
			for _, j := range nb {
				s -= src[j]
			}
			dst[i] = s
		}
	}
}

// computeLambda returns max(|λ_2(W)|, |λ_m(W)|) for the weights of mx, in closed
// form, densely or by Lanczos (see denseSpectrumMax).
func (mx *Mixing) computeLambda() (float64, error) {
	g := mx.graph
	m := g.N
	if m == 1 {
		return 0, nil
	}
	if mx.directed {
		return mx.lambdaDirected()
	}
	if s, ok := closedSpectrum(g); ok {
		// W = I − cL has the eigenvalues 1 − cμ of L's.
		var c float64
		switch {
		case mx.name == MixLaplacian:
			c = 2 / (3 * s.max)
		case mx.name == MixMetropolis && s.degree >= 0:
			c = 1 / float64(1+s.degree)
		}
		if c != 0 {
			return max(math.Abs(1-float64(c*s.fiedler)), math.Abs(1-float64(c*s.max))), nil
		}
	}
	if m <= denseSpectrumMax {
		return mx.lambdaDense()
	}
	return mx.lambdaSparse()
}

// lambdaDense computes λ from the dense eigendecomposition of W.
func (mx *Mixing) lambdaDense() (float64, error) {
	m := mx.graph.N
	ev, err := eigenvalues(flatten(mx.Dense()), m)
	if err != nil {
		return 0, err
	}
	return max(math.Abs(ev[m-2]), math.Abs(ev[0])), nil
}

// lambdaSparse computes λ by Lanczos on W restricted to the complement of
// the all-ones vector, W's eigenvector for 1. For the Laplacian mixing only
// the top needs converging: W = I − cL with c = 2/(3 λ_max(L)) has its
// eigenvalues on that complement in [1/3, 1], the bottom one 1/3.
func (mx *Mixing) lambdaSparse() (float64, error) {
	want := wantBoth
	if mx.name == MixLaplacian {
		want = wantHigh
	}
	lo, hi, err := lanczos(mx.graph.N, mx.apply, want)
	if err != nil {
		return 0, fmt.Errorf("λ of a %d-node %s mixing matrix: %w", mx.graph.N, mx.name, err)
	}
	if want == wantHigh {
		return max(math.Abs(hi), 1.0/3), nil
	}
	return max(math.Abs(lo), math.Abs(hi)), nil
}

// lambdaDirected computes λ = ‖W − 11ᵀ/m‖₂ of a directed W as the square
// root of the largest eigenvalue of WᵀW off the all-ones vector (W being
// doubly stochastic, WᵀW maps that complement into itself).
func (mx *Mixing) lambdaDirected() (float64, error) {
	m := mx.graph.N
	tmp := make([]float64, m)
	op := func(dst, src []float64) {
		mx.apply(tmp, src)
		mx.applyT(dst, tmp)
	}
	if m <= denseSpectrumMax {
		a := make([]float64, m*m)
		col, out := make([]float64, m), make([]float64, m)
		for j := range m {
			clear(col)
			col[j] = 1
			for i := range col {
				col[i] -= 1 / float64(m) // (I − J) e_j
			}
			op(out, col)
			for i, v := range out {
				a[i*m+j] = v
			}
		}
		for i := range m { // symmetrise away rounding
			for j := range i {
				v := (a[i*m+j] + a[j*m+i]) / 2
				a[i*m+j], a[j*m+i] = v, v
			}
		}
		ev, err := eigenvalues(a, m)
		if err != nil {
			return 0, err
		}
		return math.Sqrt(max(ev[m-1], 0)), nil
	}
	_, hi, err := lanczos(m, op, wantHigh)
	if err != nil {
		return 0, fmt.Errorf("λ of a %d-node directed %s mixing matrix: %w", m, mx.name, err)
	}
	return math.Sqrt(max(hi, 0)), nil
}

// applyT sets dst = Wᵀ src.
func (mx *Mixing) applyT(dst, src []float64) {
	for j := range dst {
		dst[j] = mx.self[j] * src[j]
	}
	for i, nb := range mx.from {
		for k, j := range nb {
			dst[j] += float64(mx.w[i][k] * src[i])
		}
	}
}

// apply sets dst = W src.
func (mx *Mixing) apply(dst, src []float64) {
	for i, nb := range mx.from {
		s := mx.self[i] * src[i]
		for k, j := range nb {
			s += float64(mx.w[i][k] * src[j])
		}
		dst[i] = s
	}
}

// closedForm reports whether closedSpectrum gives λ_max(L) and λ of mixing on a
// graph of the generator named topology, by name alone (for estimates made before the graph exists): every generator but "er" for the
// Laplacian mixing, the regular ones (ring, complete, torus) for
// Metropolis–Hastings.
func closedForm(topology, mixing string) bool {
	switch topology {
	case "ring", "complete", "torus":
		return true
	case "path", "star":
		return mixing == MixLaplacian
	}
	return false
}

func flatten(rows [][]float64) []float64 {
	out := make([]float64, 0, len(rows)*len(rows))
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}
