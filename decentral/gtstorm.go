package decentral

// gtstorm is GT-STORM (paper Algorithm 1): gradient tracking with a
// STORM-style recursive momentum estimator.
//
//	x_{i,0} = x^0,  v_{i,0} = ∇f_i(x_{i,0}; ζ_{i,0})
//	x_{i,t} = Σ_j W_ij x_{j,t−1} − η_{t−1} v_{i,t−1}
//	v_{i,t} = β_t Σ_j W_ij v_{j,t−1} + ∇f_i(x_{i,t}; ζ_{i,t}) − β_t ∇f_i(x_{i,t−1}; ζ_{i,t})
//
// with ONE minibatch ζ_{i,t} per node and round, used for both gradients.
// A node sends x and v (2p floats) per neighbour and keeps v and x_{t−1}
// (2p floats) beyond the model: two gradient evaluations per round.
type gtstorm struct{}

func (gtstorm) name() string          { return GTSTORM }
func (gtstorm) power() float64        { return CbrtPower }
func (gtstorm) stateFloats(p int) int { return 2 * p }
func (gtstorm) shares() int           { return 2 }

func (gtstorm) alloc(o *Optimizer) {
	n := o.m * o.p
	o.v, o.vNext = make([]float32, n), make([]float32, n)
}

func (gtstorm) share(o *Optimizer, i int) {
	o.send[i] = append(o.send[i][:0], o.row(o.x, i), o.row(o.v, i))
}

func (gtstorm) initNode(o *Optimizer, w, i int) error {
	v := o.row(o.v, i)
	loss, err := o.grad(w, i, o.row(o.x, i), o.sampler.Sample(i), v)
	if err != nil {
		return err
	}
	o.rLoss[i] = float64(loss)
	return checkFinite("v", v)
}

func (gtstorm) stepNode(o *Optimizer, w, i int) error {
	x, xn := o.row(o.x, i), o.row(o.xNext, i) // x_{t−1}, x_t
	v, vn := o.row(o.v, i), o.row(o.vNext, i) // v_{t−1}, v_t
	gNew, gOld := o.scratch[2*w], o.scratch[2*w+1]
	o.mixRow(xn, i, 0, x)
	addScaled(xn, -o.eta32, v)
	o.mixRow(vn, i, 1, v)
	b := o.sampler.Sample(i)
	loss, err := o.gradPair(w, i, xn, x, b, gNew, gOld)
	if err != nil {
		return err
	}
	o.rLoss[i] = float64(loss)
	beta := o.beta32
	gOld, gNew = gOld[:len(vn)], gNew[:len(vn)]
	for k := range vn {
		vn[k] = beta*(vn[k]-gOld[k]) + gNew[k]
	}
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("v", vn)
}

func (gtstorm) commit(o *Optimizer) {
	o.x, o.xNext = o.xNext, o.x
	o.v, o.vNext = o.vNext, o.v
}
