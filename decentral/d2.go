package decentral

import (
	"fmt"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// D2 is the name of D² in Config.Algorithm.
const D2 = "d2"

// D2Method is D² (Tang et al., ICML 2018), decentralized SGD corrected for
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
type D2Method struct{}

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

// DirectedCaution says that D² on a directed graph is outside its theory.
func (D2Method) DirectedCaution(graph string) string {
	return "D² on the directed " + graph + " graph is outside its theory, which wants a symmetric W: on (I + P)/2 its recursion can have modes that grow (see docs/results.md)"
}

// Describe describes D²: x, z and g, of which it shares z.

func (D2Method) Describe() Description {
	return Description{Name: D2, Slabs: []string{"x", "z", "g"}, Shared: []int{d2Z}, StateFloats: 2, Power: SqrtPower}
}

// Init sets z_0 = x_0 − η_0 g_0.
func (D2Method) Init(c RoundContext) error {
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

// Step mixes x_{t+1} = W z_t and forms z_{t+1}.
func (D2Method) Step(c RoundContext) error {
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
		zn[k] = float32(2*xn[k]) - x[k] - float32(etaNext*gn[k]) + float32(eta*g[k])
	}
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("z", zn)
}

// Samples is one minibatch a round and one at Init (g_0).
func (D2Method) Samples(t int, c Cost) int64 { return int64(c.Batch) }

// CheckMixing refuses a W whose smallest eigenvalue is −1/3 or below, for
// which D²'s recursion stops contracting the disagreement between nodes
// (at λ = −1/3 one of its modes has modulus 1). Gershgorin's bound
// min_i (W_ii − Σ_{j≠i} |W_ij|) > −1/3 accepts without an eigensolver (the
// Laplacian W, whose spectrum lies in [1/3, 1]; the one-peer exponential
// graph's (I + P)/2, whose eigenvalues have real part ≥ 0). Otherwise a
// symmetric W's exact λ_min decides, and a directed W is refused.
func (D2Method) CheckMixing(w *graph.Mixing) error {
	bound := w.GershgorinMin()
	if bound > d2MinLambda+d2Margin {
		return nil
	}
	if w.Directed() {
		return fmt.Errorf("D² needs λ_min(W) > −1/3; this directed %s mixing matrix only bounds Re λ ≥ %.4g (Gershgorin)", w.Name(), bound)
	}
	lo, err := w.LambdaMin()
	if err != nil {
		return fmt.Errorf("D² needs λ_min(W) > −1/3: %w", err)
	}
	if !(lo > d2MinLambda+d2Margin) {
		return fmt.Errorf("D² needs λ_min(W) > −1/3; this %s mixing matrix has λ_min = %.4g", w.Name(), lo)
	}
	return nil
}
