package decentral

import "math"

// DSGD is the name of decentralized SGD in Config.Algorithm.
const DSGD = "dsgd"

// DSGDMethod is decentralized SGD:
//
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_t ∇f_i(x_{i,t}; ζ_{i,t}).
//
// A node sends x (p floats) to each neighbour per round, evaluates one
// gradient per round, and keeps no state beyond the model.
type DSGDMethod struct{}

// Describe describes DSGD: x, which it shares.
func (DSGDMethod) Describe() Description {
	return Description{Name: DSGD, Slabs: []string{"x"}, Shared: []int{0}, Power: SqrtPower}
}

// Init records no loss: DSGD evaluates nothing before its first round.
func (DSGDMethod) Init(c RoundContext) error {
	c.SetLoss(math.NaN())
	return nil
}

// Step takes the gradient step from the mixed x.
func (DSGDMethod) Step(c RoundContext) error {
	x, xn := c.Cur(0), c.Next(0)
	g, _ := c.Scratch()
	loss, err := c.Grad(x, c.Batch(), g)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	c.Mix(xn, 0, x)
	addScaled(xn, -c.Eta(), g)
	return checkFinite("x", xn)
}

// Samples is one minibatch a round, none at Init.
func (DSGDMethod) Samples(t int, c Cost) int64 {
	if t == 0 {
		return 0
	}
	return int64(c.Batch)
}
