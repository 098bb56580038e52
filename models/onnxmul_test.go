package models

import (
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportMulOfTwoTensors imports Muls of two tensors of the network's
// data that are no activation's pattern as Net.Mul, training as a network
// built in Go with those layers, bit for bit: x and the Sigmoid of another
// tensor (a GLU), x·σ(x) where σ(x) is read again (SiLU's pattern cannot
// take it), σ(x)², x and the Hardsigmoid of another tensor, two maps, and
// the two halves of tokens' features (gMLP's x.chunk(2, dim=-1), Split).
func TestImportMulOfTwoTensors(t *testing.T) {
	inits := []onnx.Tensor{onnx.FloatTensor("w", ramp(32, 1), 16, 2), onnx.FloatTensor("w2", ramp(32, 2), 16, 2),
		onnx.FloatTensor("k", ramp(18, 3), 2, 1, 3, 3), onnx.FloatTensor("k4", ramp(36, 4), 4, 1, 3, 3), onnx.Int64Tensor("ts", []int64{0, 4, -1}, 3),
		onnx.FloatTensor("w4", ramp(8, 5), 4, 2)}
	flat, mm, mm2 := node("Flatten", []string{"x"}, "f"), node("MatMul", []string{"f", "w"}, "z"), node("MatMul", []string{"f", "w2"}, "z2")
	dense := func(n *Net, name string) Tensor { return n.DenseNoBias(name, n.Flatten(n.Input()), 2) }
	for _, c := range []struct {
		name  string
		nodes []onnx.Node
		ops   string
		build func(n *Net) Tensor
	}{
		{"x and another tensor's Sigmoid", []onnx.Node{flat, mm, mm2, node("Sigmoid", []string{"z2"}, "s"), node("Mul", []string{"z", "s"}, "y")},
			"flatten dense sigmoid dense mul", func(n *Net) Tensor {
				f := n.Flatten(n.Input())
				s := n.Sigmoid(n.DenseNoBias("w2", f, 2)) // the MatMul w is made where the Mul reads it
				return n.Mul(n.DenseNoBias("w", f, 2), s)
			}},
		{"a Sigmoid read twice", []onnx.Node{flat, mm, node("Sigmoid", []string{"z"}, "s"), node("Mul", []string{"z", "s"}, "p"), node("Add", []string{"p", "s"}, "y")},
			"flatten dense sigmoid mul add", func(n *Net) Tensor {
				z := dense(n, "w")
				s := n.Sigmoid(z)
				return n.Add(n.Mul(z, s), s)
			}},
		{"a Sigmoid squared", []onnx.Node{flat, mm, node("Sigmoid", []string{"z"}, "s"), node("Mul", []string{"s", "s"}, "y")},
			"flatten dense sigmoid mul", func(n *Net) Tensor {
				s := n.Sigmoid(dense(n, "w"))
				return n.Mul(s, s)
			}},
		{"x and another tensor's Hardsigmoid", []onnx.Node{flat, mm, mm2, node("HardSigmoid", []string{"z2"}, "s", onnx.FloatAttr("alpha", 1.0/6)), node("Mul", []string{"z", "s"}, "y")},
			"flatten dense hardsigmoid dense mul", func(n *Net) Tensor {
				f := n.Flatten(n.Input())
				s := n.Hardsigmoid(n.DenseNoBias("w2", f, 2)) // the MatMul w is made where the Mul reads it
				return n.Mul(n.DenseNoBias("w", f, 2), s)
			}},
		{"two maps", []onnx.Node{node("Conv", []string{"x", "k"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Relu", []string{"c"}, "r"),
			node("Mul", []string{"r", "c"}, "p"), node("ReduceMean", []string{"p"}, "y", onnx.IntsAttr("axes", 2, 3), onnx.IntAttr("keepdims", 0))},
			"conv relu mul globalavgpool", func(n *Net) Tensor {
				c := n.Conv2D("k", n.Input(), Conv{Out: 2, Kernel: 3, Pad: 1})
				return n.GlobalAvgPool(n.Mul(n.ReLU(c), c))
			}},
		{"halves of tokens split", []onnx.Node{node("Conv", []string{"x", "k4"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Reshape", []string{"c", "ts"}, "r"),
			node("Transpose", []string{"r"}, "t", onnx.IntsAttr("perm", 0, 2, 1)), {Name: "/s/Split", OpType: "Split", Inputs: []string{"t"}, Outputs: []string{"u", "v"}, Attrs: []onnx.Attr{onnx.IntAttr("axis", 2)}},
			node("Mul", []string{"u", "v"}, "p"), node("ReduceMean", []string{"p"}, "y", onnx.IntsAttr("axes", 1), onnx.IntAttr("keepdims", 0))},
			"conv channels channels mul globalavgpool", func(n *Net) Tensor { // gMLP's u, v = x.chunk(2, dim=-1); u * v
				c := n.Conv2D("k4", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
				return n.GlobalAvgPool(n.Mul(n.Channels(c, 0, 2), n.Channels(c, 2, 4)))
			}},
		{"SiLU of tokens, x first", siluOfTokens("t", "s"), "conv silu globalavgpool dense", siluTokensNet},
		{"SiLU of tokens, σ first", siluOfTokens("s", "t"), "conv silu globalavgpool dense", siluTokensNet},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, x0, err := ImportONNX("mul", tinyONNX(t, 13, batchN, inits, c.nodes...), []int{1, 4, 4}, 2)
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := Spec(m)
			var ops []string
			for _, l := range spec.Layers {
				ops = append(ops, l.Op)
			}
			if strings.Join(ops, " ") != c.ops {
				t.Errorf("imports as %v, want %s", ops, c.ops)
			}
			n := NewNet("mul", []int{1, 4, 4}, 2)
			want, err := n.Model(c.build(n))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(paramNames(want), paramNames(m)) {
				t.Fatalf("parameters %v, want %v", paramNames(m), paramNames(want))
			}
			sameTraining(t, c.name, want, x0, m, x0, batchOf(imageSet(5, 3, 2, true, 1, 4, 4), 0, 1, 2))
		})
	}
}

// siluOfTokens is a convolution's tokens [N,16,4] (channels-last), F.silu
// of them as torch writes it, Mul of the operands first and second (the
// tokens t and their Sigmoid s), x.mean(1) and a Linear w4 without bias.
func siluOfTokens(first, second string) []onnx.Node {
	return []onnx.Node{node("Conv", []string{"x", "k4"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Reshape", []string{"c", "ts"}, "r"),
		node("Transpose", []string{"r"}, "t", onnx.IntsAttr("perm", 0, 2, 1)), node("Sigmoid", []string{"t"}, "s"),
		node("Mul", []string{first, second}, "p"), node("ReduceMean", []string{"p"}, "m", onnx.IntsAttr("axes", 1), onnx.IntAttr("keepdims", 0)),
		node("MatMul", []string{"m", "w4"}, "y")}
}

// siluTokensNet is siluOfTokens' network in Go.
func siluTokensNet(n *Net) Tensor {
	h := n.SiLU(n.Conv2D("k4", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1}))
	return n.DenseNoBias("w4", n.GlobalAvgPool(h), 2)
}
