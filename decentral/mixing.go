package decentral

import "fmt"

// Mixing names accepted by NewMixing.
const (
	MixLaplacian  = "laplacian"
	MixMetropolis = "metropolis"
)

// Mixing is a symmetric doubly stochastic matrix W supported on a graph's
// edges and diagonal, held sparsely as one row per node: the node's own
// weight and its neighbours' weights.
type Mixing struct {
	name   string
	graph  *Graph
	self   []float64   // W_ii
	w      [][]float64 // w[i][k] = W_ij for j = graph.Neighbors(i)[k]
	self32 []float32
	w32    [][]float32
	lambda float64
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
	m := g.N
	mx := newMixing(MixLaplacian, g)
	for i := 0; i < m; i++ {
		mx.self[i] = 1 - c*float64(g.Degree(i))
		for k := range g.Neighbors(i) {
			mx.w[i][k] = c
		}
	}
	return mx.finish()
}

// MetropolisHastings returns Metropolis–Hastings weights:
// W_ij = 1/(1 + max(d_i, d_j)) on every edge and W_ii = 1 − Σ_{j≠i} W_ij.
// On a d-regular generator graph (ring, complete, torus) W = I − L/(1+d) and
// λ comes in closed form; otherwise as for LaplacianMixing.
func MetropolisHastings(g *Graph) (*Mixing, error) {
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("metropolis mixing: %w", err)
	}
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
	return mx.finish()
}

func newMixing(name string, g *Graph) *Mixing {
	mx := &Mixing{
		name:   name,
		graph:  g,
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

// finish fills the float32 copies of the weights and computes λ.
func (mx *Mixing) finish() (*Mixing, error) {
	for i := range mx.w {
		mx.self32[i] = float32(mx.self[i])
		for k, w := range mx.w[i] {
			mx.w32[i][k] = float32(w)
		}
	}
	lam, err := mx.computeLambda()
	if err != nil {
		return nil, fmt.Errorf("%s mixing: %w", mx.name, err)
	}
	mx.lambda = lam
	return mx, nil
}

// Name returns "laplacian" or "metropolis".
func (mx *Mixing) Name() string { return mx.name }

// Graph returns the graph W lives on.
func (mx *Mixing) Graph() *Graph { return mx.graph }

// Nodes returns m, the order of W.
func (mx *Mixing) Nodes() int { return mx.graph.N }

// Row returns node i's weights: W_ii and W_ij for j in Graph().Neighbors(i),
// in that order. The slice belongs to the Mixing.
func (mx *Mixing) Row(i int) (self float64, neighbors []float64) {
	return mx.self[i], mx.w[i]
}

// Dense returns W as an m × m matrix: m² floats, for small m only.
func (mx *Mixing) Dense() [][]float64 {
	m := mx.graph.N
	out := make([][]float64, m)
	for i := range out {
		out[i] = make([]float64, m)
		out[i][i] = mx.self[i]
		for k, j := range mx.graph.Neighbors(i) {
			out[i][j] = mx.w[i][k]
		}
	}
	return out
}

// Lambda returns λ = max(|λ_2|, |λ_m|), the second-largest eigenvalue
// magnitude of W (λ_1 = 1 ≥ λ_2 ≥ … ≥ λ_m). It is below 1 exactly when the
// graph is connected, and 0 for a single node.
func (mx *Mixing) Lambda() float64 { return mx.lambda }
