package decentral

import "math"

// DSGD is the name of decentralized SGD in Config.Algorithm.
const DSGD = "dsgd"

// dsgd is decentralized SGD:
//
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_t ∇f_i(x_{i,t}; ζ_{i,t}).
//
// A node sends x (p floats) to each neighbour per round, evaluates one
// gradient per round, and keeps no state beyond the model.
type dsgd struct{}

func (dsgd) Name() string          { return DSGD }
func (dsgd) Power() float64        { return SqrtPower }
func (dsgd) Slabs() []string       { return []string{"x"} }
func (dsgd) StateFloats(p int) int { return 0 }
func (dsgd) Shares() int           { return 1 }

func (dsgd) Share(c RoundContext, send [][]float32) [][]float32 {
	return append(send, c.Cur(0))
}

func (dsgd) Init(c RoundContext) error {
	c.SetLoss(math.NaN())
	return nil
}

func (dsgd) Step(c RoundContext) error {
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

// Samples: one minibatch a round, none at Init.
func (dsgd) Samples(t int, c Cost) int64 {
	if t == 0 {
		return 0
	}
	return int64(c.Batch)
}
