package decentral

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// D2 is the name of D² in Config.Algorithm.
const D2 = "d2"

// d2 is D² (Tang et al., ICML 2018), decentralized SGD corrected for
// heterogeneous (non-IID) local data:
//
//	x_{i,1}   = Σ_j W_ij (x_{j,0} − η_0 g_{j,0})
//	x_{i,t+1} = Σ_j W_ij (2x_{j,t} − x_{j,t−1} − η_t g_{j,t} + η_{t−1} g_{j,t−1})
//
// with g_{i,t} = ∇f_i(x_{i,t}; ζ_{i,t}) on the node's t-th minibatch (Init
// draws ζ_{i,0}). A node keeps the bracket z_t, which is all it shares, and
// g_t: round t mixes x_{t+1} = W_t z_t, evaluates g_{t+1} at x_{t+1} and
// forms z_{t+1} = 2x_{t+1} − x_t − η_{t+1} g_{t+1} + η_t g_t. A node sends
// one p-vector per neighbour, evaluates one gradient per round and keeps z
// and g (2p floats) beyond the model. D² needs λ_min(W) > −1/3 (see
// CheckMixing); its step sizes decay as DSGD's.
//
// In float32 the node average drifts slowly: x̄'s recursion has a double
// root at 1, so rounding that does not cancel — chiefly W's weights rounded
// to float32, whose rows sum to 1 ± ~3e-8 — accumulates, O(t^{3/2}/η_0)
// ulps on a noiseless problem (see TestD2RemovesHeterogeneityBias).
type d2 struct{}

// D²'s slabs.
const (
	d2X = iota
	d2Z
	d2G
)

// d2MinLambda is the bound λ_min(W) must exceed for D², with a margin for
// rounding: a λ_min or Gershgorin bound within d2Margin of −1/3 counts as
// −1/3 (Metropolis–Hastings weights on an even ring have λ_min = −1/3
// exactly, computed a few ulps to either side).
const (
	d2MinLambda = -1.0 / 3
	d2Margin    = 1e-9
)

func (d2) Name() string          { return D2 }
func (d2) Power() float64        { return SqrtPower }
func (d2) Slabs() []string       { return []string{"x", "z", "g"} }
func (d2) StateFloats(p int) int { return 2 * p }
func (d2) Shares() int           { return 1 }

func (d2) Share(c RoundContext, send [][]float32) [][]float32 {
	return append(send, c.Cur(d2Z))
}

func (d2) Init(c RoundContext) error {
	x, z, g := c.Cur(d2X), c.Cur(d2Z), c.Cur(d2G)
	loss, err := c.Grad(x, c.Batch(), g)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	copy(z, x)
	addScaled(z, -c.Eta(), g) // z_0 = x_0 − η_0 g_0
	return checkFinite("z", z)
}

func (d2) Step(c RoundContext) error {
	x, xn := c.Cur(d2X), c.Next(d2X) // x_t, x_{t+1}
	z, zn := c.Cur(d2Z), c.Next(d2Z)
	g, gn := c.Cur(d2G), c.Next(d2G)
	c.Mix(xn, 0, z)
	loss, err := c.Grad(xn, c.Batch(), gn)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	eta, etaNext := c.Eta(), c.EtaNext()
	x, xn, g, gn = x[:len(zn)], xn[:len(zn)], g[:len(zn)], gn[:len(zn)]
	for k := range zn {
		zn[k] = 2*xn[k] - x[k] - etaNext*gn[k] + eta*g[k]
	}
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("z", zn)
}

// Samples: one minibatch a round and one at Init (g_0).
func (d2) Samples(t int, c Cost) int64 { return int64(c.Batch) }

// CheckMixing refuses a W whose smallest eigenvalue is −1/3 or below, for
// which D²'s recursion stops contracting the disagreement between nodes
// (at λ = −1/3 one of its modes has modulus 1). Gershgorin's bound
// min_i (W_ii − Σ_{j≠i} |W_ij|) > −1/3 accepts without an eigensolver (the
// Laplacian W, whose spectrum lies in [1/3, 1]; the one-peer exponential
// graph's (I + P)/2, whose eigenvalues have real part ≥ 0). Otherwise a
// symmetric W's exact λ_min decides, and a directed W is refused.
func (m d2) CheckMixing(w *Mixing) error {
	bound := m.gershgorinMin(w)
	if bound > d2MinLambda+d2Margin {
		return nil
	}
	if w.Directed() {
		return fmt.Errorf("D² needs λ_min(W) > −1/3; this directed %s mixing matrix only bounds Re λ ≥ %.4g (Gershgorin)", w.Name(), bound)
	}
	lo, err := m.lambdaMin(w)
	if err != nil {
		return fmt.Errorf("D² needs λ_min(W) > −1/3: %w", err)
	}
	if !(lo > d2MinLambda+d2Margin) {
		return fmt.Errorf("D² needs λ_min(W) > −1/3; this %s mixing matrix has λ_min = %.4g", w.Name(), lo)
	}
	return nil
}

// lambdaMin returns the smallest eigenvalue of the symmetric W: from the
// dense eigendecomposition for m ≤ denseSpectrumMax, else by Lanczos on the
// complement of the all-ones vector (whose eigenvalue, 1, is never the
// smallest).
func (d2) lambdaMin(w *Mixing) (float64, error) {
	m := w.Nodes()
	if m == 1 {
		return w.self[0], nil
	}
	if m <= denseSpectrumMax {
		ev, err := eigenvalues(mat.NewSymDense(m, flatten(w.Dense())))
		if err != nil {
			return 0, fmt.Errorf("λ_min of a %d-node %s mixing matrix: %w", m, w.Name(), err)
		}
		return ev[0], nil
	}
	lo, _, err := lanczos(m, w.apply, wantLow)
	if err != nil {
		return 0, fmt.Errorf("λ_min of a %d-node %s mixing matrix: %w", m, w.Name(), err)
	}
	return min(lo, 1), nil
}

// gershgorinMin returns min_i (W_ii − Σ_{j≠i} |W_ij|), a lower bound on the
// real part of every eigenvalue of W.
func (d2) gershgorinMin(w *Mixing) float64 {
	bound := math.Inf(1)
	for i := range w.Nodes() {
		self, row := w.Row(i)
		r := 0.0
		for _, v := range row {
			r += math.Abs(v)
		}
		bound = min(bound, self-r)
	}
	return bound
}
