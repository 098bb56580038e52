package graphops

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
)

// TestLayerErrors checks that the layers refuse shapes and arguments they
// cannot compute, and a layer name used twice, with the graph's first
// error naming the layer.
func TestLayerErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(g *Graph, x, w *G.Node) *G.Node // x [2,4,6,6], w [3,4,3,3]
		want  string
	}{
		{"stride 0", func(g *Graph, x, w *G.Node) *G.Node { return g.Conv2DStrided(x, w, 0, 1) }, "c: stride 0 and padding 1"},
		{"negative padding", func(g *Graph, x, w *G.Node) *G.Node { return g.Conv2DStrided(x, w, 1, -1) }, "padding -1"},
		{"kernel past the padding", func(g *Graph, x, _ *G.Node) *G.Node {
			return g.Conv2DStrided(x, g.Input("big.w", make([]float32, 4*4*9*9), 4, 4, 9, 9), 1, 1)
		}, "big: conv shape"},
		{"channels", func(g *Graph, x, _ *G.Node) *G.Node {
			return g.Conv2DStrided(x, g.Input("odd.w", make([]float32, 3*5*3*3), 3, 5, 3, 3), 1, 1)
		}, "do not make a convolution"},
		{"two convolutions named alike", func(g *Graph, x, w *G.Node) *G.Node {
			return g.Conv2DStrided(g.Conv2D(x, w), g.Input("c.w", make([]float32, 3*3*3*3), 3, 3, 3, 3), 1, 1)
		}, "c: two layers of the graph have this name"},
		{"groups not dividing channels", func(g *Graph, x, _ *G.Node) *G.Node {
			return g.GroupNorm(x, g.Input("n.g", make([]float32, 4), 4), g.Input("n.b", make([]float32, 4), 4), 3)
		}, "n: group norm shape"},
		{"group norm scales", func(g *Graph, x, _ *G.Node) *G.Node {
			return g.GroupNorm(x, g.Input("n.g", make([]float32, 3), 3), g.Input("n.b", make([]float32, 4), 4), 2)
		}, "n: input (2, 4, 6, 6), scales (3) and shifts (4) do not match"},
		{"channel bias", func(g *Graph, x, _ *G.Node) *G.Node {
			return g.ChannelBias(x, g.Input("c.b", make([]float32, 3), 3))
		}, "c.bias: input (2, 4, 6, 6) and bias (3) do not match"},
		{"add shapes", func(g *Graph, x, w *G.Node) *G.Node { return g.Add("sum", x, w) }, "sum: (2, 4, 6, 6) + (3, 4, 3, 3): want the same shapes"},
		{"two ReLUs named alike", func(g *Graph, x, _ *G.Node) *G.Node { return g.ReLU("r", g.ReLU("r", x)) }, "r: two layers"},
		{"window past the plane", func(g *Graph, x, _ *G.Node) *G.Node { return g.MaxPool("p", x, 7, 1) }, "p: pool shape"},
		{"stride 0 pooling", func(g *Graph, x, _ *G.Node) *G.Node { return g.AvgPool("p", x, 2, 0) }, "p: pool shape"},
		{"window past a byte", func(g *Graph, _, _ *G.Node) *G.Node {
			return g.MaxPool("p", g.Input("big", make([]float32, 17*17), 1, 1, 17, 17), 17, 1)
		}, "p: pool shape"},
		{"global pooling of a matrix", func(g *Graph, _, _ *G.Node) *G.Node {
			return g.GlobalAvgPool("gap", g.Input("m", make([]float32, 6), 2, 3))
		}, "gap: input (2, 3): want [n,C,H,W]"},
		{"concat of one", func(g *Graph, x, _ *G.Node) *G.Node { return g.Concat("cat", x) }, "cat: 1 inputs, want at least 2"},
		{"concat of two batches", func(g *Graph, x, _ *G.Node) *G.Node {
			return g.Concat("cat", x, g.Input("m", make([]float32, 6), 3, 2))
		}, "cat: input 1 of shape (3, 2), want [2,…]"},
		{"channel constants", func(g *Graph, x, _ *G.Node) *G.Node {
			return g.ChannelConst("sub", x, ConstSub, []float32{1, 2, 3, 4, 5})
		}, "sub: 5 constants for an input of shape (2, 4, 6, 6), want 1 or one per channel"},
		{"nil input", func(g *Graph, _, _ *G.Node) *G.Node { return g.ReLU("r", nil) }, "r: input 0 is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Build(func() error {
				g := New(nil, true)
				x := g.Input("x", make([]float32, 2*4*6*6), 2, 4, 6, 6)
				w := g.Input("c.w", make([]float32, 3*4*3*3), 3, 4, 3, 3)
				if n := tt.build(g, x, w); n != nil {
					t.Errorf("got a node, want an error")
				}
				return g.Err()
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestGradientSumsRunOnKernels checks that the Program of a residual
// network runs no stock Gorgonia op: G.Grad's sums of the gradient terms of
// nodes read by two ops run as kernel-backed adds, named after their terms,
// on buffers of the workspace.
func TestGradientSumsRunOnKernels(t *testing.T) {
	for _, tt := range []struct {
		spec string
		sums int
	}{
		{"residual-projection", 1}, // the block's input, read by its convolution and its shortcut
		{"residual-identity", 2},   // each block's input, read by its convolution and its Add
		{"add", 2},                 // the input, read by two convolutions and an Add: two sums
		{"conv3x3-s1-p1", 0},
	} {
		var s netSpec
		for _, c := range netSpecs {
			if c.name == tt.spec {
				s = c
			}
		}
		ws := NewWorkspace()
		bn, err := s.build(ws, 2, true, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sums []string
		for _, st := range bn.prog.steps {
			op, ok := st.op.(namedOp)
			if !ok && st.op.Arity() == 0 {
				continue // the constant seed of the gradient, 1
			}
			if !ok {
				t.Errorf("%s: %v runs Gorgonia's op %v", tt.spec, st.node, st.op)
				continue
			}
			if name := op.opName(); strings.HasPrefix(name, "sum(") {
				sums = append(sums, name)
				if _, ok := ws.Sizes()["f32:"+name+".y"]; !ok {
					t.Errorf("%s: no workspace buffer %s.y", tt.spec, name)
				}
			}
		}
		if len(sums) != tt.sums {
			t.Errorf("%s: gradient sums %q, want %d", tt.spec, sums, tt.sums)
		}
	}
}
