package graph

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// TimeVarying is a [Topology] whose W_t changes from round to round and that
// summarises its mixing over a run of the given number of rounds as one
// per-round contraction factor, the time-varying counterpart of
// [Mixing.Lambda]: how much a round shrinks the disagreement between nodes,
// on the whole. [OnePeerExp] and [LinkDrop] implement it; each documents
// what its Lambda is.
type TimeVarying interface {
	Topology
	// Lambda returns the per-round contraction of a run of rounds ≥ 1
	// rounds, a value in [0, 1]: 0 for exact averaging, 1 for none.
	Lambda(rounds int) (float64, error)
	// LambdaMeaning says, for a report, what Lambda(rounds) summarises.
	LambdaMeaning(rounds int) string
}

// LambdaMeaning says what Lambda reports: the per-round contraction over
// one period.
func (e *OnePeerExp) LambdaMeaning(int) string {
	p := e.Period()
	return fmt.Sprintf("per round over one period of %d rounds: ‖W_%d⋯W_0 − J‖^(1/%d)", p, p-1, p)
}

// LambdaMeaning says what Lambda(rounds) reports: the mean of the rounds'
// λ(W_t) over the first ones.
func (l *LinkDrop) LambdaMeaning(rounds int) string {
	return fmt.Sprintf("mean of λ(W_t) over rounds 1–%d", min(rounds, LinkDropLambdaRounds))
}

var (
	_ TimeVarying = (*OnePeerExp)(nil)
	_ TimeVarying = (*LinkDrop)(nil)
)

// ExpTopology is the name of the one-peer exponential graph, as a topology
// and as the name of its mixing matrices.
const ExpTopology = "exp"

// OnePeerExp is the one-peer exponential graph (Ying et al., NeurIPS 2021,
// "Exponential graph is provably efficient for decentralized deep
// training"): in round t every node i averages its vector with that of the
// single node (i − 2^k) mod m, k = t mod τ, τ = ⌈log₂ m⌉, so
// W_t = (I + P_t)/2 with P_t the cyclic shift by 2^k: W_t[i][i] = 1/2 and
// W_t[i][(i − 2^k) mod m] = 1/2. Node j sends one message per round, to
// (j + 2^k) mod m. Each W_t is doubly stochastic though in general not
// symmetric. A single node (m = 1) has τ = 1 and W = I.
//
// Its τ matrices are built once by [OnePeerExponential]; a OnePeerExp is
// read-only afterwards and safe for concurrent use.
type OnePeerExp struct {
	nodes int       // m
	ws    []*Mixing // W_k for k = 0..τ−1

	lamOnce sync.Once
	lam     float64
	lamErr  error
}

// OnePeerExponential returns the one-peer exponential graph on m ≥ 1 nodes.
func OnePeerExponential(m int) (*OnePeerExp, error) {
	if m < 1 {
		return nil, fmt.Errorf("%s topology: %d nodes, want at least 1", ExpTopology, m)
	}
	tau := max(1, bits.Len(uint(m-1))) // ⌈log₂ m⌉
	e := &OnePeerExp{nodes: m, ws: make([]*Mixing, tau)}
	for k := range tau {
		self := make([]float64, m)
		from := make([][]int, m)
		w := make([][]float64, m)
		for i := range m {
			self[i] = 1
			if j := e.peer(i, k); j != i {
				self[i] = 0.5
				from[i] = []int{j}
				w[i] = []float64{0.5}
			}
		}
		mx, err := NewMixingRows(ExpTopology, self, from, w)
		if err != nil {
			return nil, fmt.Errorf("%s topology, round %d of %d: %w", ExpTopology, k, tau, err)
		}
		e.ws[k] = mx
	}
	return e, nil
}

// peer returns (i − 2^k) mod m.
func (e *OnePeerExp) peer(i, k int) int {
	m := e.nodes
	return ((i-(1<<k))%m + m) % m
}

// Mixing returns W_t = W_{t mod τ}; it does not allocate.
func (e *OnePeerExp) Mixing(t int) *Mixing { return e.ws[e.phase(t)] }

// phase returns k = t mod τ, in [0, τ) for any t.
func (e *OnePeerExp) phase(t int) int {
	tau := len(e.ws)
	return (t%tau + tau) % tau
}

// Period returns τ = ⌈log₂ m⌉ (1 for m = 1): W_{t+τ} = W_t.
func (e *OnePeerExp) Period() int { return len(e.ws) }

// Peer returns the node i mixes from in round t, (i − 2^k) mod m with
// k = t mod τ: the only j ≠ i with W_t[i][j] ≠ 0, or i itself when m = 1.
func (e *OnePeerExp) Peer(i, t int) int { return e.peer(i, e.phase(t)) }

// Lambda returns the per-round contraction of the one-peer exponential graph
// over one period, ‖W_{τ−1} ⋯ W_1 W_0 − J‖₂^{1/τ} with J = 11ᵀ/m: the τ-th
// root of how much a whole period of τ rounds shrinks the disagreement
// between nodes. It is 0 when m is a power of two, where a period averages
// exactly (the product is J), and in (0, 1) otherwise (below 1 as W_0, a
// single cycle, contracts and no W_t expands; above 0 as the product's
// entries are multiples of 2^−τ, never 1/m). rounds must be ≥ 1
// and does not change the value: every period contracts alike.
//
// The λ of a single W_t says little here: when m is even and k = t mod τ
// ≥ 1, the shift by 2^k splits the nodes into gcd(2^k, m) ≥ 2 disjoint
// cycles that W_t does not mix, so ‖W_t − J‖₂ = 1; for m a power of two
// that is every W_t but W_0, although τ rounds reach exact consensus.
//
// The norm is the largest singular value of the m × m product, computed
// densely (gonum's SVD) when m ≤ denseSpectrumMax and otherwise by Lanczos
// on (product)ᵀ(product) restricted to the complement of 1, applying the
// sparse W_t; it is computed once and kept.
func (e *OnePeerExp) Lambda(rounds int) (float64, error) {
	if rounds < 1 {
		return 0, fmt.Errorf("%s topology: λ over %d rounds, want at least 1", ExpTopology, rounds)
	}
	e.lamOnce.Do(func() {
		var sigma float64
		if e.nodes <= denseSpectrumMax {
			sigma, e.lamErr = e.periodNormDense()
		} else {
			sigma, e.lamErr = e.periodNormSparse()
		}
		if e.lamErr != nil {
			e.lamErr = fmt.Errorf("%s topology on %d nodes: λ: %w", ExpTopology, e.nodes, e.lamErr)
			return
		}
		e.lam = detmath.Pow(sigma, 1/float64(len(e.ws)))
	})
	return e.lam, e.lamErr
}

// periodNormDense returns ‖W_{τ−1} ⋯ W_0 − J‖₂ from the dense product. As
// every W_t is doubly stochastic, W_t J = J and the product minus J is
// W_{τ−1} ⋯ W_0 (I − J), built by applying the sparse rows of each W_t.
func (e *OnePeerExp) periodNormDense() (float64, error) {
	m := e.nodes
	if m == 1 {
		return 0, nil
	}
	cur, next := make([]float64, m*m), make([]float64, m*m)
	for i := range m {
		for j := range m {
			cur[i*m+j] = -1 / float64(m)
		}
		cur[i*m+i]++
	}
	for _, w := range e.ws {
		for i := range m { // row i of W·cur = self_i cur_i + Σ_k w_k cur_{from_k}
			dst := next[i*m : (i+1)*m]
			self, ws := w.Row(i)
			for c, v := range cur[i*m : (i+1)*m] {
				dst[c] = self * v
			}
			for k, j := range w.From(i) {
				for c, v := range cur[j*m : (j+1)*m] {
					dst[c] += float64(ws[k] * v)
				}
			}
		}
		cur, next = next, cur
	}
	// ‖A‖₂ = √λ_max(AᵀA), from the eigenvalues of AᵀA (symeig.go: the
	// same bits on every architecture, where gonum's SVD differed).
	ata := make([]float64, m*m) // its lower triangle, all eigenvalues reads
	for i := range m {
		for j := range i + 1 {
			s := 0.0
			for k := range m {
				s += float64(cur[k*m+i] * cur[k*m+j])
			}
			ata[i*m+j] = s
		}
	}
	ev, err := eigenvalues(ata, m)
	if err != nil {
		return 0, err
	}
	return math.Sqrt(max(ev[m-1], 0)), nil
}

// periodNormSparse returns ‖W_{τ−1} ⋯ W_0 − J‖₂ as the square root of the
// largest eigenvalue of AᵀA, A = W_{τ−1} ⋯ W_0, on the complement of 1
// (which A and Aᵀ map into itself), by Lanczos.
func (e *OnePeerExp) periodNormSparse() (float64, error) {
	m := e.nodes
	a, b := make([]float64, m), make([]float64, m)
	op := func(dst, src []float64) {
		copy(a, src)
		for _, w := range e.ws { // a ← A src
			w.apply(b, a)
			a, b = b, a
		}
		for k := len(e.ws) - 1; k >= 0; k-- { // a ← Aᵀ a
			e.ws[k].applyT(b, a)
			a, b = b, a
		}
		copy(dst, a)
	}
	_, hi, err := lanczos(m, op, wantHigh)
	if err != nil {
		return 0, err
	}
	return math.Sqrt(max(hi, 0)), nil
}

// LinkDropLambdaRounds bounds the rounds [LinkDrop.Lambda] averages over.
const LinkDropLambdaRounds = 100

// linkDropStream is xored into a LinkDrop's seed to seed each round's
// generator, so that its stream differs from the other streams the same
// seed drives (the graph generator's, the samplers').
const linkDropStream = 0x6c696e6b_64726f70 // "linkdrop"

// LinkDrop is a static graph whose links fail at random: in every round
// each edge of the base graph fails independently with probability p, and
// W_t is the mixing matrix of the edges that survive — Metropolis–Hastings
// as SPEC §9 has it, or the paper's Laplacian rule, which keeps D²'s
// condition λ_min > −1/3 — so it stays symmetric and doubly stochastic. A round
// in which no edge survives has W_t = I.
//
// The failures are counter-based: round t's come from
// rand.New(rand.NewPCG(seed ^ 0x6c696e6b64726f70, uint64(t))) (math/rand/v2;
// the constant spells "linkdrop"), which draws one Float64 u per base edge in
// the order of Graph.Edges, the edge failing when u < p. W_t is thus a pure
// function of (seed, t): a resumed run needs no generator state (the round
// is the state), and any round can be inspected on its own.
//
// Mixing keeps the last matrix it built, so it is not safe for concurrent
// use (the optimizer calls it from one goroutine); Lambda is.
type LinkDrop struct {
	base *Graph
	kind string // the mixing rule: MixLaplacian or MixMetropolis
	p    float64
	seed uint64
	full *Mixing // the base graph's matrix, for rounds where every edge survives

	last  *Mixing // W_lastT, or nil
	lastT int
	alive [][2]int // scratch: the surviving edges of a round
}

// NewLinkDrop returns the base graph with links failing with probability p
// in [0, 1) each round, the failures drawn from seed, and W_t the mixing
// matrix named kind (MixLaplacian or MixMetropolis, SPEC §9's) of the
// surviving edges. p = 0 gives the base graph's matrix every round.
func NewLinkDrop(base *Graph, kind string, p float64, seed uint64) (*LinkDrop, error) {
	if err := base.check(); err != nil {
		return nil, fmt.Errorf("link drop: %w", err)
	}
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("link drop probability %v, want a value in [0, 1)", p)
	}
	full, err := mixingWeights(kind, base)
	if err != nil {
		return nil, fmt.Errorf("link drop: %w", err)
	}
	return &LinkDrop{
		base: base, kind: kind, p: p, seed: seed, full: full,
		alive: make([][2]int, 0, len(base.Edges)),
	}, nil
}

// Base returns the graph whose links fail.
func (l *LinkDrop) Base() *Graph { return l.base }

// Prob returns p, the probability that a link fails in a round.
func (l *LinkDrop) Prob() float64 { return l.p }

// Mixing returns W_t, the mixing matrix of the edges alive in round t, or
// nil if its weights could not be computed (an eigensolver failure, which
// the optimizer reports). Asked for the same t twice in a row it returns
// the same matrix; a round in which every edge survives returns the base
// graph's matrix. Its λ is computed only when asked for.
func (l *LinkDrop) Mixing(t int) *Mixing {
	if l.last != nil && l.lastT == t {
		return l.last
	}
	mx, alive, err := l.build(t, l.alive[:0])
	l.alive = alive
	if err != nil {
		return nil
	}
	l.last, l.lastT = mx, t
	return mx
}

// build returns W_t, using alive (empty) as scratch, and the scratch.
func (l *LinkDrop) build(t int, alive [][2]int) (*Mixing, [][2]int, error) {
	rng := rand.New(rand.NewPCG(l.seed^linkDropStream, uint64(t)))
	for _, e := range l.base.Edges {
		if rng.Float64() >= l.p {
			alive = append(alive, e)
		}
	}
	if len(alive) == len(l.base.Edges) {
		return l.full, alive, nil
	}
	g, err := New(l.base.N, alive)
	if err != nil { // a subset of a valid graph's edges
		return nil, alive, fmt.Errorf("link drop round %d: %w", t, err)
	}
	mx, err := mixingWeights(l.kind, g)
	if err != nil {
		return nil, alive, fmt.Errorf("link drop round %d: %w", t, err)
	}
	return mx, alive, nil
}

// Lambda returns the mean of λ(W_t) = ‖W_t − 11ᵀ/m‖₂ (see [Mixing.Lambda])
// over rounds t = 0, …, n−1, n = min(rounds, LinkDropLambdaRounds), rounds
// ≥ 1: the expected per-round contraction, estimated from the run's first
// rounds (a round whose surviving graph is disconnected counts 1). It builds
// those matrices afresh, leaving Mixing's alone, and costs n eigenvalue
// computations.
func (l *LinkDrop) Lambda(rounds int) (float64, error) {
	if rounds < 1 {
		return 0, fmt.Errorf("link drop: λ over %d rounds, want at least 1", rounds)
	}
	n := min(rounds, LinkDropLambdaRounds)
	sum := 0.0
	alive := make([][2]int, 0, len(l.base.Edges))
	for t := range n {
		mx, a, err := l.build(t, alive[:0])
		if err != nil {
			return 0, err
		}
		alive = a
		lam, err := mx.LambdaErr()
		if err != nil {
			return 0, fmt.Errorf("link drop round %d: %w", t, err)
		}
		sum += lam
	}
	return sum / float64(n), nil
}
