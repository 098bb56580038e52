package decentral

import "math"

// dsgd is decentralized SGD:
//
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_t ∇f_i(x_{i,t}; ζ_{i,t}).
//
// A node sends x (p floats) to each neighbour per round, evaluates one
// gradient per round, and keeps no state beyond the model.
type dsgd struct{}

func (dsgd) name() string              { return DSGD }
func (dsgd) power() float64            { return SqrtPower }
func (dsgd) alloc(*Optimizer)          {}
func (dsgd) stateFloats(p int) int     { return 0 }
func (dsgd) shares() int               { return 1 }
func (dsgd) share(o *Optimizer, i int) { o.send[i] = append(o.send[i][:0], o.row(o.x, i)) }

func (dsgd) initNode(o *Optimizer, w, i int) error {
	o.rLoss[i] = math.NaN()
	return nil
}

func (dsgd) stepNode(o *Optimizer, w, i int) error {
	x, xn := o.row(o.x, i), o.row(o.xNext, i)
	g := o.scratch[2*w]
	loss, err := o.grad(w, i, x, o.sampler.Sample(i), g)
	if err != nil {
		return err
	}
	o.rLoss[i] = float64(loss)
	o.mixRow(xn, i, 0, x)
	addScaled(xn, -o.eta32, g)
	return checkFinite("x", xn)
}

func (dsgd) commit(o *Optimizer) { o.x, o.xNext = o.xNext, o.x }
