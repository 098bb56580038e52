package decentral

// gnsd is gradient-tracking decentralized SGD (GNSD):
//
//	y_{i,0}   = ∇f_i(x_0; ζ_{i,0})
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_t y_{i,t}
//	y_{i,t+1} = Σ_j W_ij y_{j,t} + ∇f_i(x_{i,t+1}; ζ_{i,t+1}) − ∇f_i(x_{i,t}; ζ_{i,t})
//
// The last gradient is kept, not recomputed: one evaluation per round. A
// node sends x and y (2p floats) per neighbour and keeps y and the last
// gradient (2p floats) beyond the model.
type gnsd struct{}

func (gnsd) name() string          { return GNSD }
func (gnsd) power() float64        { return SqrtPower }
func (gnsd) stateFloats(p int) int { return 2 * p }
func (gnsd) shares() int           { return 2 }

func (gnsd) alloc(o *Optimizer) {
	n := o.m * o.p
	o.v, o.vNext = make([]float32, n), make([]float32, n)
	o.g, o.gNext = make([]float32, n), make([]float32, n)
}

func (gnsd) share(o *Optimizer, i int) {
	o.send[i] = append(o.send[i][:0], o.row(o.x, i), o.row(o.v, i))
}

func (gnsd) initNode(o *Optimizer, w, i int) error {
	g := o.row(o.g, i)
	loss, err := o.grad(w, i, o.row(o.x, i), o.sampler.Sample(i), g)
	if err != nil {
		return err
	}
	o.rLoss[i] = float64(loss)
	copy(o.row(o.v, i), g)
	return checkFinite("y", g)
}

func (gnsd) stepNode(o *Optimizer, w, i int) error {
	x, xn := o.row(o.x, i), o.row(o.xNext, i)
	y, yn := o.row(o.v, i), o.row(o.vNext, i)
	g, gn := o.row(o.g, i), o.row(o.gNext, i)
	o.mixRow(xn, i, 0, x)
	addScaled(xn, -o.eta32, y)
	o.mixRow(yn, i, 1, y)
	sub(yn, g)
	loss, err := o.grad(w, i, xn, o.sampler.Sample(i), gn)
	if err != nil {
		return err
	}
	o.rLoss[i] = float64(loss)
	add(yn, gn)
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("y", yn)
}

func (gnsd) commit(o *Optimizer) {
	o.x, o.xNext = o.xNext, o.x
	o.v, o.vNext = o.vNext, o.v
	o.g, o.gNext = o.gNext, o.g
}
