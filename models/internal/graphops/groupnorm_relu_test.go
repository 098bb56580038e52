package graphops

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
)

// TestGroupNormReLUSameBits checks that GroupNormReLU gives the loss and
// the gradients of GroupNorm then ReLU as two layers, bit for bit, after a
// convolution (the input gradient in dx) and on the graph's input (no dx:
// the ReLU's gradient in the layer's scratch).
func TestGroupNormReLUSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	randoms := func(k int) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	const n, c, hw = 3, 8, 5
	xs, cw := randoms(n*c*hw*hw), randoms(c*c*9)
	gs, bs, fw, fb := randoms(c), randoms(c), randoms(c*4), randoms(4)
	labels := []uint8{1, 3, 0}
	run := func(fused, onInput bool) (float32, [][]float32) {
		var loss float32
		var grads [][]float32
		if err := Build(func() error {
			g := New(NewWorkspace(), true)
			x := g.Input("x", xs, n, c, hw, hw)
			w := g.Input("c.w", cw, c, c, 3, 3)
			gam, bet := g.Input("gn.g", gs, c), g.Input("gn.b", bs, c)
			h := x
			if !onInput {
				h = g.Conv2DStrided(x, w, 1, 1)
			}
			var y *G.Node
			if fused {
				y = g.GroupNormReLU(h, gam, bet, 2)
			} else {
				y = g.ReLU("r", g.GroupNorm(h, gam, bet, 2))
			}
			fcw, fcb := g.Input("fc.w", fw, c, 4), g.Input("fc.b", fb, 4)
			l := g.SoftmaxCrossEntropy(g.Dense(g.GlobalAvgPool("gap", y), fcw, fcb), labels)
			wrt := []*G.Node{gam, bet, fcw}
			if !onInput {
				wrt = append(wrt, w)
			}
			prog, slots, err := g.Compile(append([]*G.Node{l}, g.Gradients(l, wrt...)...)...)
			if err != nil {
				return err
			}
			if err := prog.Run(); err != nil {
				return err
			}
			if loss, err = prog.Scalar(slots[0]); err != nil {
				return err
			}
			for _, s := range slots[1:] {
				v, err := prog.Float32s(s)
				if err != nil {
					return err
				}
				grads = append(grads, append([]float32(nil), v...))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return loss, grads
	}
	for _, onInput := range []bool{false, true} {
		l0, g0 := run(false, onInput)
		l1, g1 := run(true, onInput)
		if math.Float32bits(l0) != math.Float32bits(l1) {
			t.Errorf("on input %v: loss %v fused, %v as two layers", onInput, l1, l0)
		}
		for i := range g0 {
			for k := range g0[i] {
				if math.Float32bits(g0[i][k]) != math.Float32bits(g1[i][k]) {
					t.Fatalf("on input %v: gradient %d [%d] = %v fused, %v as two layers", onInput, i, k, g1[i][k], g0[i][k])
				}
			}
		}
	}
}
