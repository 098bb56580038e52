package models

import (
	"fmt"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// ONNX opset, input and output of the exported classifiers.
const (
	// ONNXOpset is the version of the default ONNX operator set the export
	// uses: Conv, Relu, LeakyRelu, Tanh, Sigmoid, Clip, MaxPool, AveragePool,
	// GlobalAveragePool, InstanceNormalization, Concat and Add of opset
	// 11–13 semantics, Flatten, Reshape, Sub, Mul, Div and Gemm of opset 13
	// (SiLU is Sigmoid and Mul, as torch writes nn.SiLU at this opset;
	// Elu, Softplus and HardSigmoid of opset 6–13, Erf of 13: Hardswish is
	// HardSigmoid and Mul, GELU Div, Erf, Add, Mul and Mul, as torch writes them;
	// Slice of opset 13 for a range of channels, and Reshape, Transpose,
	// Reshape for a channel shuffle; the token layers as torch writes a
	// ViT's and an MLP-Mixer's: Reshape, Transpose, Gather, MatMul,
	// Softmax, Shape, Slice, Expand and Concat, see nettokens_onnx.go).
	ONNXOpset = 13
	// ONNXInput names the graph's input: the network's input tensor,
	// float32 NCHW [N,C,H,W] with a dynamic batch dimension N.
	ONNXInput = "input"
	// ONNXOutput names the graph's output: the logits, float32 [N,classes].
	ONNXOutput = "logits"
	// ONNXBatch is the symbolic name (dim_param) of the batch dimension.
	ONNXBatch = "N"
)

// ONNX returns the image classifier m (any network New or a Net makes)
// with parameters params as an ONNX model of opset ONNXOpset. Its graph
// takes ONNXInput, the tensor the network reads — float32 NCHW [N,C,H,W],
// already scaled (and normalised) as gtstorm's datasets deliver it — and
// returns ONNXOutput, the logits [N,classes]; N is dynamic. The graph is
// written from the network's description, one ONNX node (or a few) per
// layer: Conv (its group G for a grouped convolution), Relu, LeakyRelu,
// Tanh, Sigmoid, Clip (Clamp, its bounds scalar initialisers), SiLU as
// Sigmoid then Mul of
// x and it, MaxPool, AveragePool,
// GlobalAveragePool, Add, Concat (axis 1), Slice along axis 1 (Channels,
// its starts, ends and axes initialisers), Reshape to [N,G,C/G,H,W],
// Transpose perm [0,2,1,3,4] and Reshape back (ShuffleChannels, as torch
// writes channel_shuffle), Flatten, Gemm, Add, Sub, Mul and
// Div of a constant (an initialiser [C,1,1] per channel, or a scalar), and
// for GroupNorm the Reshape,
// InstanceNormalization, Reshape, Mul, Add form that PyTorch's exporter
// writes at this opset. The weights are initialisers holding copies of
// params, in layout order and laid out as the network reads them: convolution weights [OC,C/G,KH,KW]
// (ONNX's Conv layout), dense weights [in,out] for Gemm without
// transposition, GroupNorm's scale and shift [C,1,1] to broadcast over
// the maps; the metadata gtstorm.trainable lists the initialisers of
// Scale and Shift, which the import trains. The caller may add a model
// doc string and metadata before encoding.
func ONNX(m Model, params []float32) (*onnx.Model, error) {
	cm, ok := m.(*classifier)
	if !ok {
		return nil, fmt.Errorf("%s: no ONNX export (only the image classifiers, such as %s, %s and %s…, have one)", m.Name(), MNISTCNNName, CIFARCNNName, MLPPrefix)
	}
	if err := checkVec("params", params, cm.size); err != nil {
		return nil, fmt.Errorf("%s: %w", cm.name, err)
	}
	g := newONNXGraph(cm, params)
	for _, l := range cm.net.layers {
		g.addLayer(l)
	}
	return g.model(), nil
}

// model wraps the finished graph in an ONNX model, documenting its input,
// output and layers.
func (g *onnxGraph) model() *onnx.Model {
	cm := g.cm
	in := append([]onnx.Dim{{Param: ONNXBatch}}, onnx.Dims(cm.shape...)...)
	doc := fmt.Sprintf("gtstorm %s, %d parameters.\n"+
		"Input %q: float32 [N,%s], NCHW, N the (dynamic) batch size: the tensor the network reads, already scaled as gtstorm feeds it (pixel bytes divided by 255 and, where the run normalised its data, standardised per channel).\n"+
		"Output %q: float32 [N,%d], the class logits (unnormalised; softmax gives the probabilities, argmax the prediction).\n"+
		"Layers:\n  %s",
		cm.name, cm.size, ONNXInput, joinInts(cm.shape), ONNXOutput, cm.classes, strings.Join(g.desc, "\n  "))
	return &onnx.Model{
		Opsets:       []onnx.OpsetID{{Version: ONNXOpset}},
		ProducerName: "gtstorm",
		Metadata:     g.trainableMetadata(),
		Graph: onnx.Graph{
			Name:         cm.name,
			DocString:    doc,
			Nodes:        g.nodes,
			Initializers: g.inits,
			Inputs: []onnx.ValueInfo{{Name: ONNXInput, ElemType: onnx.Float, Shape: in,
				DocString: fmt.Sprintf("float32 [N,%s] NCHW input, scaled as gtstorm feeds the network", joinInts(cm.shape))}},
			Outputs: []onnx.ValueInfo{{Name: ONNXOutput, ElemType: onnx.Float,
				Shape: []onnx.Dim{{Param: ONNXBatch}, {Value: int64(cm.classes)}}, DocString: "class logits"}},
		},
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
