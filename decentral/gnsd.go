package decentral

// GNSD is the name of gradient-tracking decentralized SGD in
// Config.Algorithm.
const GNSD = "gnsd"

// GNSDMethod is gradient-tracking decentralized SGD (GNSD):
//
//	y_{i,0}   = ∇f_i(x_0; ζ_{i,0})
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_t y_{i,t}
//	y_{i,t+1} = Σ_j W_ij y_{j,t} + ∇f_i(x_{i,t+1}; ζ_{i,t+1}) − ∇f_i(x_{i,t}; ζ_{i,t})
//
// The last gradient is kept, not recomputed: one evaluation per round. A
// node sends x and y (2p floats) per neighbour and keeps y and the last
// gradient g (2p floats) beyond the model.
type GNSDMethod struct{}

// GNSD's slabs.
const (
	gnsdX = iota
	gnsdY
	gnsdG
)

// Describe describes GNSD: x, y and g, of which it shares x and y and
// tracks y.
func (GNSDMethod) Describe() Description {
	return Description{Name: GNSD, Slabs: []string{"x", "y", "g"}, Shared: []int{gnsdX, gnsdY},
		Direction: gnsdY, StateFloats: 2, Power: SqrtPower}
}

// Init sets y_0 = g_0, the gradient at x_0.
func (GNSDMethod) Init(c RoundContext) error {
	g := c.Cur(gnsdG)
	loss, err := c.Grad(c.Cur(gnsdX), c.Batch(), g)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	copy(c.Cur(gnsdY), g)
	return checkFinite("y", g)
}

// Step mixes x and y and tracks the new gradient.
func (GNSDMethod) Step(c RoundContext) error {
	x, xn := c.Cur(gnsdX), c.Next(gnsdX)
	y, yn := c.Cur(gnsdY), c.Next(gnsdY)
	g, gn := c.Cur(gnsdG), c.Next(gnsdG)
	c.Mix(xn, 0, x)
	addScaled(xn, -c.Eta(), y)
	c.Mix(yn, 1, y)
	sub(yn, g)
	loss, err := c.Grad(xn, c.Batch(), gn)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	add(yn, gn)
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("y", yn)
}

// Samples is one minibatch a round and one at Init (y_0).
func (GNSDMethod) Samples(t int, c Cost) int64 { return int64(c.Batch) }
