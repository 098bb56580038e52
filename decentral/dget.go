package decentral

// DGET is the name of D-GET in Config.Algorithm.
const DGET = "d-get"

// dget is D-GET (Sun, Lu, Hong, ICML 2020): gradient tracking of a
// SARAH/SPIDER-type estimator v that restarts from a large-batch gradient
// every q rounds (Config.Period), with a constant step η_0:
//
//	v_{i,0}   = y_{i,0} = ∇f_i(x_0; S1)
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_0 y_{i,t}
//	v_{i,t+1} = ∇f_i(x_{i,t+1}; S1)                                   if (t+1) mod q = 0
//	v_{i,t+1} = v_{i,t} + ∇f_i(x_{i,t+1}; ζ_{i,t+1}) − ∇f_i(x_{i,t}; ζ_{i,t+1})  otherwise
//	y_{i,t+1} = Σ_j W_ij y_{j,t} + v_{i,t+1} − v_{i,t}
//
// S1 is the node's whole share or Config.BigBatch samples of it (the batch
// source must be a [FullBatcher]); ζ_{i,t+1} is one minibatch used at both
// points, as GT-STORM's. Init draws and discards ζ_{i,0}, and every round
// draws ζ_{i,t+1} even when it takes S1, so that a node's t-th draw is round
// t's minibatch as for every other algorithm. A node sends x and y (2p
// floats) per neighbour and keeps y and v (2p floats) beyond the model.
type dget struct{}

// D-GET's slabs.
const (
	dgetX = iota
	dgetY
	dgetV
)

func (dget) Name() string          { return DGET }
func (dget) Power() float64        { return 0 }
func (dget) Slabs() []string       { return []string{"x", "y", "v"} }
func (dget) StateFloats(p int) int { return 2 * p }
func (dget) Shares() int           { return 2 }
func (dget) Direction() int        { return dgetY }

func (dget) Share(c RoundContext, send [][]float32) [][]float32 {
	return append(send, c.Cur(dgetX), c.Cur(dgetY))
}

func (dget) Init(c RoundContext) error {
	if c.Batch() == nil { // ζ_0: drawn to keep the draws aligned, not used
		return errNoBatch
	}
	v := c.Cur(dgetV)
	loss, err := c.FullGrad(c.Cur(dgetX), v)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	copy(c.Cur(dgetY), v)
	return checkFinite("v", v)
}

func (dget) Step(c RoundContext) error {
	x, xn := c.Cur(dgetX), c.Next(dgetX)
	y, yn := c.Cur(dgetY), c.Next(dgetY)
	v, vn := c.Cur(dgetV), c.Next(dgetV)
	c.Mix(xn, 0, x)
	addScaled(xn, -c.Eta(), y)
	b := c.Batch()
	var (
		loss float32
		err  error
	)
	if (c.Round()+1)%c.Period() == 0 {
		// The large batch: FullGrad uses the scratch buffers itself.
		if b == nil {
			return errNoBatch
		}
		loss, err = c.FullGrad(xn, vn)
	} else {
		gNew, gOld := c.Scratch()
		loss, err = c.GradPair(xn, x, b, gNew, gOld)
		if err == nil {
			copy(vn, v)
			add(vn, gNew)
			sub(vn, gOld)
		}
	}
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	c.Mix(yn, 1, y)
	v, vn = v[:len(yn)], vn[:len(yn)]
	for k := range yn {
		yn[k] += vn[k] - v[k]
	}
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("y", yn)
}

// Samples: S1 at Init and every q-th round, two gradients on one minibatch
// in the other rounds.
func (dget) Samples(t int, c Cost) int64 {
	q := c.Period
	if q <= 0 {
		q = DefaultPeriod
	}
	if t == 0 || t%q == 0 {
		return int64(c.Full)
	}
	return 2 * int64(c.Batch)
}
