package decentral

import (
	"cmp"
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/decentral/compress"
)

// CHOCO is the name of CHOCO-SGD in Config.Algorithm.
const CHOCO = "choco"

// DefaultGamma is CHOCO-SGD's default consensus step γ: on the MNIST
// setting (10 nodes, ER p_c 0.5, label partition) CHOCO with top-k 1% or
// QSGD 4-bit stays stable over 3000 rounds with it, while with γ = 0.2 the
// consensus error grows about 1.5% a round until the run collapses. The
// theory's safe γ (Koloskova et al. 2019, Theorem 2) is far smaller still:
// about 4·10⁻⁵ for top-k 1% on that graph.
const DefaultGamma = 0.05

// CHOCOMethod is CHOCO-SGD (Koloskova, Stich, Jaggi, ICML 2019), decentralized
// SGD with compressed gossip. Every node keeps a public copy x̂_i of its
// model, which its neighbours know as well, and sends only a compressed
// correction of it:
//
//	x_{i,t+½} = x_{i,t} − η_t ∇f_i(x_{i,t}; ζ_{i,t})
//	q_{i,t}   = Q(x_{i,t+½} − x̂_{i,t})
//	x̂_{j,t+1} = x̂_{j,t} + q_{j,t}  for the node and its neighbours
//	x_{i,t+1} = x_{i,t+½} + γ Σ_j W_ij (x̂_{j,t+1} − x̂_{i,t+1}).
//
// A node does not keep its neighbours' copies: it keeps s_i = Σ_j W_ij x̂_j,
// which moves by Σ_j W_ij q_j each round, so its state beyond the model is
// x̂_i and s_i (2p), whatever its degree. That needs W fixed, so CHOCO runs
// on static graphs only.
//
// Q is Compress (RoundContext.Compress); an unbiased compressor
// (QSGD) is scaled by its Scale to be the contraction the method needs, as
// Compress and a receiving transport both do. All nodes start from the
// same x_0, which every node knows, so the public copies start there
// (x̂_{i,0} = s_{i,0} = x_0) rather than at the paper's 0: no message is
// needed to agree on them.
//
// With Q the identity and γ = 1, x̂_{t+1} = x_{t+½} and the round is
// x_{t+1} = W(x_t − η_t g_t): DSGD with the gradient step taken before the
// mixing ("adapt then combine").
type CHOCOMethod struct {
	// Gamma is the consensus step γ in (0, 1]; 0 means DefaultGamma.
	Gamma float64
	// Compress is the compressor Q, a spec of package compress such as
	// "topk:0.01"; empty means "none".
	Compress string
}

// chocoKnobs are CHOCO-SGD's knobs: Compress, which a comparison's
// choco:SPEC sets, and Gamma, which a run records when it is the default.
var chocoKnobs = []Knob{
	func() Knob {
		k := StringKnob("compress", "CHOCO's message compressor: none|topk:F|randk:F|qsgd:S|sign (F: fraction kept; S: levels, qsgd:7 is 4 bits a value)", "none", func(s string) string {
			if _, err := compress.Parse(s); err != nil {
				return "none, topk:F or randk:F with F in (0, 1], qsgd:S with S in [1, 65535], or sign"
			}
			return ""
		})
		k.Variant = true
		k.resolve = func(v any) any {
			// The compressor's own name, so that qsgd:07 and qsgd:7 are one setting.
			if c, err := compress.Parse(v.(string)); err == nil {
				return c.String()
			}
			return v
		}
		return k
	}(),
	func() Knob {
		k := FloatKnob("gamma", fmt.Sprintf("CHOCO's consensus step γ (0: %g)", DefaultGamma), 0, func(g float64) string {
			if !(g >= 0 && g <= 1) {
				return fmt.Sprintf("a consensus step in (0, 1] (0: %g)", DefaultGamma)
			}
			return ""
		})
		k.resolve = func(v any) any { return cmp.Or(v.(float64), DefaultGamma) }
		return k
	}(),
}

// newCHOCO makes CHOCO-SGD from its knobs "gamma" and "compress".
func newCHOCO(k Knobs) Method {
	return CHOCOMethod{Gamma: k.Float("gamma"), Compress: k.String("compress")}
}

// GammaOrDefault returns Gamma, or DefaultGamma when it is 0.
func (m CHOCOMethod) GammaOrDefault() float64 {
	if m.Gamma != 0 {
		return m.Gamma
	}
	return DefaultGamma
}

// Validate refuses a consensus step outside [0, 1] and a compressor
// package compress does not know.
func (m CHOCOMethod) Validate() error {
	return checkKnobs(chocoKnobs, Knobs{"gamma": m.Gamma, "compress": m.Compress})
}

// The slabs: x, the public copy x̂ and s = Σ_j W_ij x̂_j.
const (
	chocoX = iota
	chocoHat
	chocoS
)

// Describe describes CHOCO-SGD: x, x̂ and s; a node sends the compressed
// correction q_{i,t} that Prepare made, on a static graph (s_i = Σ_j W_ij x̂_j
// holds only while W stays the same).
func (m CHOCOMethod) Describe() Description {
	return Description{Name: CHOCO, Slabs: []string{"x", "xhat", "s"}, StateFloats: 2,
		Power: SqrtPower, StaticGraph: true, Compress: cmp.Or(m.Compress, "none")}
}

// Init starts the public copies at x_0: x̂_{i,0} = s_{i,0} = x_0.
func (CHOCOMethod) Init(c RoundContext) error {
	x := c.Cur(chocoX)
	copy(c.Cur(chocoHat), x)
	copy(c.Cur(chocoS), x)
	c.SetLoss(math.NaN())
	return nil
}

// Prepare takes the local step into x's next row, x_{t+½}, and compresses
// x_{t+½} − x̂_t into the node's message.
func (CHOCOMethod) Prepare(c RoundContext) error {
	x, half := c.Cur(chocoX), c.Next(chocoX)
	g, diff := c.Scratch()
	loss, err := c.Grad(x, c.Batch(), g)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	copy(half, x)
	addScaled(half, -c.Eta(), g)
	if err := checkFinite("x", half); err != nil {
		return err
	}
	hat := c.Cur(chocoHat)
	for k := range diff {
		diff[k] = half[k] - hat[k]
	}
	if _, err := c.Compress(diff); err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	return nil
}

// Step updates x̂ and s with the round's messages and takes the consensus
// step from x_{t+½}.
func (m CHOCOMethod) Step(c RoundContext) error {
	q := c.Message()
	hat, hatNext := c.Cur(chocoHat), c.Next(chocoHat)
	s, sNext := c.Cur(chocoS), c.Next(chocoS)
	mixed, _ := c.Scratch()
	c.Mix(mixed, 0, q)
	for k := range hatNext {
		hatNext[k] = hat[k] + q[k]
		sNext[k] = s[k] + mixed[k]
	}
	x := c.Next(chocoX) // x_{t+½}, from Prepare
	gamma := float32(m.GammaOrDefault())
	for k := range x {
		x[k] += float32(gamma * (sNext[k] - hatNext[k]))
	}
	return checkFinite("x", x)
}

// Samples is one minibatch a round, none at Init.
func (CHOCOMethod) Samples(t int, c Cost) int64 {
	if t == 0 {
		return 0
	}
	return int64(c.Batch)
}

func scale(v []float32, s float32) {
	for k := range v {
		v[k] *= s
	}
}
