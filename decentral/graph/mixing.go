package graph

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Mixing names accepted by NewMixing.
const (
	MixLaplacian  = "laplacian"
	MixMetropolis = "metropolis"
)

// Mixing is a doubly stochastic matrix W supported on a graph's edges and
// diagonal, held sparsely as one row per node: the node's own weight and the
// weights of the nodes it mixes from. The mixing matrices of NewMixing are
// symmetric; NewMixingRows also takes directed ones, such as a round of the
// one-peer exponential graph.
type Mixing struct {
	name     string
	graph    *Graph      // the support: {i, j} when W_ij or W_ji is not 0
	from     [][]int     // from[i]: the j ≠ i with W_ij ≠ 0, increasing
	to       [][]int     // to[j]: the i ≠ j with W_ij ≠ 0, increasing
	directed bool        // W ≠ Wᵀ
	self     []float64   // W_ii
	w        [][]float64 // w[i][k] = W_ij for j = from[i][k]
	self32   []float32
	w32      [][]float32

	lambdaOnce sync.Once
	lambda     float64
	lambdaErr  error
}

// NewMixing builds the mixing matrix named kind ("laplacian" or
// "metropolis") on g.
func NewMixing(kind string, g *Graph) (*Mixing, error) {
	switch kind {
	case MixLaplacian:
		return LaplacianMixing(g)
	case MixMetropolis:
		return MetropolisHastings(g)
	}
	return nil, fmt.Errorf("mixing %q: want %s or %s", kind, MixLaplacian, MixMetropolis)
}

// LaplacianMixing returns the paper's W = I − 2/(3 λ_max(L)) L, L = D − A the
// graph Laplacian and λ_max(L) its largest eigenvalue. A graph without edges
// gets W = I. λ_max(L) and λ come in closed form for the ring, path,
// complete, star and torus generators, and otherwise from a dense or, for
// large graphs, a sparse eigensolver (see denseSpectrumMax).
func LaplacianMixing(g *Graph) (*Mixing, error) {
	mx, err := laplacianWeights(g)
	if err != nil {
		return nil, err
	}
	return mx.finish()
}

// laplacianWeights is LaplacianMixing with λ not yet computed.
func laplacianWeights(g *Graph) (*Mixing, error) {
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("laplacian mixing: %w", err)
	}
	var c float64
	if len(g.Edges) > 0 {
		top, err := laplacianMax(g)
		if err != nil {
			return nil, fmt.Errorf("laplacian mixing: %w", err)
		}
		c = 2 / (3 * top)
	}
	mx := newMixing(MixLaplacian, g)
	for i := 0; i < g.N; i++ {
		mx.self[i] = 1 - float64(c*float64(g.Degree(i)))
		for k := range g.Neighbors(i) {
			mx.w[i][k] = c
		}
	}
	mx.fill32()
	return mx, nil
}

// MetropolisHastings returns Metropolis–Hastings weights:
// W_ij = 1/(1 + max(d_i, d_j)) on every edge and W_ii = 1 − Σ_{j≠i} W_ij.
// On a d-regular generator graph (ring, complete, torus) W = I − L/(1+d) and
// λ comes in closed form; otherwise as for LaplacianMixing.
func MetropolisHastings(g *Graph) (*Mixing, error) {
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("metropolis mixing: %w", err)
	}
	return metropolisWeights(g).finish()
}

// metropolisWeights is MetropolisHastings, on a graph built by New,
// with λ not yet computed.
func metropolisWeights(g *Graph) *Mixing {
	mx := newMixing(MixMetropolis, g)
	for i := 0; i < g.N; i++ {
		sum := 0.0
		for k, j := range g.Neighbors(i) {
			w := 1 / float64(1+max(g.Degree(i), g.Degree(j)))
			mx.w[i][k] = w
			sum += w
		}
		mx.self[i] = 1 - sum
	}
	mx.fill32()
	return mx
}

// mixingWeights returns the mixing matrix named kind on g, which was built
// by New, with λ not yet computed.
func mixingWeights(kind string, g *Graph) (*Mixing, error) {
	switch kind {
	case MixLaplacian:
		return laplacianWeights(g)
	case MixMetropolis:
		return metropolisWeights(g), nil
	}
	return nil, fmt.Errorf("mixing %q: want %s or %s", kind, MixLaplacian, MixMetropolis)
}

func newMixing(name string, g *Graph) *Mixing {
	mx := &Mixing{
		name:   name,
		graph:  g,
		from:   g.adj,
		to:     g.adj,
		self:   make([]float64, g.N),
		w:      make([][]float64, g.N),
		self32: make([]float32, g.N),
		w32:    make([][]float32, g.N),
	}
	for i := range mx.w {
		mx.w[i] = make([]float64, g.Degree(i))
		mx.w32[i] = make([]float32, g.Degree(i))
	}
	return mx
}

// finish computes λ of a matrix whose weights are filled.
func (mx *Mixing) finish() (*Mixing, error) {
	if _, err := mx.LambdaErr(); err != nil {
		return nil, err
	}
	return mx, nil
}

// fill32 fills the float32 copies of the weights.
func (mx *Mixing) fill32() {
	for i := range mx.w {
		mx.self32[i] = float32(mx.self[i])
		for k, w := range mx.w[i] {
			mx.w32[i][k] = float32(w)
		}
	}
}

// rowSumTol is how far NewMixingRows lets a row or column sum be from 1.
const rowSumTol = 1e-9

// NewMixingRows returns the m × m mixing matrix named name whose row i is
// self[i] on the diagonal and w[i][k] at column from[i][k]. from[i] must
// hold distinct nodes other than i in increasing order; the weights must be
// finite and non-negative, and every row and every column must sum to 1
// (within 1e-9): W is doubly stochastic, though it need not be symmetric.
// Its λ is computed when first asked for (see Lambda).
func NewMixingRows(name string, self []float64, from [][]int, w [][]float64) (*Mixing, error) {
	m := len(self)
	if m < 1 || len(from) != m || len(w) != m {
		return nil, fmt.Errorf("%s mixing: %d diagonal weights, %d neighbour lists and %d weight rows, want the same m ≥ 1", name, m, len(from), len(w))
	}
	colSum := slices.Clone(self)
	var edges [][2]int
	seen := make(map[[2]int]bool)
	for i := range m {
		if len(w[i]) != len(from[i]) {
			return nil, fmt.Errorf("%s mixing: row %d has %d neighbours and %d weights", name, i, len(from[i]), len(w[i]))
		}
		sum := self[i]
		for k, j := range from[i] {
			switch {
			case j < 0 || j >= m || j == i:
				return nil, fmt.Errorf("%s mixing: row %d mixes node %d, want a node of [0, %d) other than %d", name, i, j, m, i)
			case k > 0 && j <= from[i][k-1]:
				return nil, fmt.Errorf("%s mixing: row %d's neighbours are not increasing at node %d", name, i, j)
			case !(w[i][k] >= 0) || math.IsInf(w[i][k], 0):
				return nil, fmt.Errorf("%s mixing: W[%d][%d] = %v, want a finite weight ≥ 0", name, i, j, w[i][k])
			}
			sum += w[i][k]
			colSum[j] += w[i][k]
			e := [2]int{min(i, j), max(i, j)}
			if !seen[e] {
				seen[e] = true
				edges = append(edges, e)
			}
		}
		if !(self[i] >= 0) || math.Abs(sum-1) > rowSumTol {
			return nil, fmt.Errorf("%s mixing: row %d sums to %v with W[%d][%d] = %v, want 1 with a diagonal ≥ 0", name, i, sum, i, i, self[i])
		}
	}
	for j, s := range colSum {
		if math.Abs(s-1) > rowSumTol {
			return nil, fmt.Errorf("%s mixing: column %d sums to %v, want 1 (W must be doubly stochastic)", name, j, s)
		}
	}
	g, err := New(m, edges)
	if err != nil {
		return nil, fmt.Errorf("%s mixing: %w", name, err)
	}
	mx := &Mixing{
		name: name, graph: g, self: slices.Clone(self),
		from: make([][]int, m), to: make([][]int, m), w: make([][]float64, m),
		self32: make([]float32, m), w32: make([][]float32, m),
	}
	for i := range m {
		mx.from[i] = slices.Clone(from[i])
		mx.w[i] = slices.Clone(w[i])
		mx.w32[i] = make([]float32, len(w[i]))
		for _, j := range from[i] {
			mx.to[j] = append(mx.to[j], i)
		}
	}
	for i := range m {
		if !slices.Equal(mx.from[i], mx.to[i]) {
			mx.directed = true
		}
	}
	if !mx.directed {
		for i := range m {
			for k, j := range mx.from[i] {
				if mx.w[i][k] != mx.weight(j, i) {
					mx.directed = true
				}
			}
		}
	}
	mx.fill32()
	return mx, nil
}

// weight returns W_ij.
func (mx *Mixing) weight(i, j int) float64 {
	if i == j {
		return mx.self[i]
	}
	if k, ok := slices.BinarySearch(mx.from[i], j); ok {
		return mx.w[i][k]
	}
	return 0
}

// Name returns the name of the rule that built W: "laplacian" or
// "metropolis" for NewMixing's, the name given to NewMixingRows ("exp" for
// the one-peer exponential graph).
func (mx *Mixing) Name() string { return mx.name }

// Graph returns the graph W lives on.
func (mx *Mixing) Graph() *Graph { return mx.graph }

// Nodes returns m, the order of W.
func (mx *Mixing) Nodes() int { return mx.graph.N }

// Row returns node i's weights: W_ii and W_ij for j in From(i), in that
// order. The slice belongs to the Mixing.
func (mx *Mixing) Row(i int) (self float64, neighbors []float64) {
	return mx.self[i], mx.w[i]
}

// Row32 returns node i's weights as float32, the values the optimizer mixes
// with: W_ii and W_ij for j in From(i), in that order. The slice belongs to
// the Mixing.
func (mx *Mixing) Row32(i int) (self float32, neighbors []float32) {
	return mx.self32[i], mx.w32[i]
}

// From returns the nodes j ≠ i whose vectors node i mixes (W_ij ≠ 0), in
// increasing order: Graph().Neighbors(i) for a symmetric W. The slice
// belongs to the Mixing.
func (mx *Mixing) From(i int) []int { return mx.from[i] }

// To returns the nodes that mix node j's vectors (W_ij ≠ 0, i ≠ j): the
// nodes j sends to. The slice belongs to the Mixing.
func (mx *Mixing) To(j int) []int { return mx.to[j] }

// Directed reports whether W is not symmetric.
func (mx *Mixing) Directed() bool { return mx.directed }

// Dense returns W as an m × m matrix: m² floats, for small m only.
func (mx *Mixing) Dense() [][]float64 {
	m := mx.graph.N
	out := make([][]float64, m)
	for i := range out {
		out[i] = make([]float64, m)
		out[i][i] = mx.self[i]
		for k, j := range mx.from[i] {
			out[i][j] = mx.w[i][k]
		}
	}
	return out
}

// Lambda returns λ = ‖W − 11ᵀ/m‖₂, how much one round of mixing contracts
// the disagreement between nodes: for a symmetric W, max(|λ_2|, |λ_m|), the
// second-largest eigenvalue magnitude (λ_1 = 1 ≥ λ_2 ≥ … ≥ λ_m), which is
// below 1 exactly when the graph is connected; for a directed W its largest
// singular value off the all-ones vector. It is 0 for a single node, and NaN
// if the eigensolver failed (LambdaErr says why).
func (mx *Mixing) Lambda() float64 {
	lam, err := mx.LambdaErr()
	if err != nil {
		return math.NaN()
	}
	return lam
}

// LambdaErr is Lambda with the eigensolver's error. The value is computed
// once, on the first call: by NewMixing's constructors right away, for the
// matrices of NewMixingRows and of time-varying topologies when asked for.
func (mx *Mixing) LambdaErr() (float64, error) {
	mx.lambdaOnce.Do(func() {
		mx.lambda, mx.lambdaErr = mx.computeLambda()
		if mx.lambdaErr != nil {
			mx.lambdaErr = fmt.Errorf("%s mixing: %w", mx.name, mx.lambdaErr)
		}
	})
	return mx.lambda, mx.lambdaErr
}
