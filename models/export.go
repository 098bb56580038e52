package models

import (
	"fmt"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// ONNX opset, input and output of the exported CNNs.
const (
	// ONNXOpset is the version of the default ONNX operator set the export
	// uses: Conv, Relu and MaxPool of opset 11–13 semantics, Flatten and
	// Gemm of opset 13.
	ONNXOpset = 13
	// ONNXInput names the graph's input: the network's input tensor,
	// float32 NCHW [N,C,H,W] with a dynamic batch dimension N.
	ONNXInput = "input"
	// ONNXOutput names the graph's output: the logits, float32 [N,classes].
	ONNXOutput = "logits"
	// ONNXBatch is the symbolic name (dim_param) of the batch dimension.
	ONNXBatch = "N"
)

// stage is one block of a CNN's forward pass as its logits function
// (mnistCNN, cifarCNN) computes it, reading the parameter tensors
// name+".w" and name+".b".
type stage struct {
	name string
	conv bool // convolution (valid, stride 1) + bias, ReLU, max-pool 2×2 stride 2 (Conv2D, BiasReLUMaxPool2x2)
	relu bool // dense layer x·w + b followed by ReLU (DenseReLU rather than Dense)
}

// onnxStages lists, for each CNN by name, the blocks of its logits
// function in order. A dense stage reading a 4-D tensor flattens it first
// (the dense layer reads each sample's C·H·W values flat, in NCHW order).
var onnxStages = map[string][]stage{
	"mnist-cnn": { // mnistCNN
		{name: "conv1", conv: true},
		{name: "conv2", conv: true},
		{name: "fc"},
	},
	"cifar-cnn": { // cifarCNN
		{name: "conv1", conv: true},
		{name: "conv2", conv: true},
		{name: "fc1", relu: true},
		{name: "fc2", relu: true},
		{name: "fc3"},
	},
}

// ONNX returns the CNN m (NewMNISTCNN or NewCIFARCNN) with parameters
// params as an ONNX model of opset ONNXOpset. Its graph takes ONNXInput,
// the tensor the network reads — float32 NCHW [N,C,H,W], already scaled
// (and normalised) as gtstorm's datasets deliver it — and returns
// ONNXOutput, the logits [N,classes]; N is dynamic. The weights are
// initialisers holding copies of params, laid out as the network reads
// them: convolution weights [OC,C,KH,KW] (ONNX's Conv layout), dense
// weights [in,out] for Gemm without transposition. Each convolution block
// is Conv (with bias) → Relu → MaxPool 2×2 stride 2, which equals the
// network's max-pool of z followed by bias and ReLU: both are monotone,
// so they commute with the maximum. The caller may add a model doc string
// and metadata before encoding.
func ONNX(m Model, params []float32) (*onnx.Model, error) {
	cm, ok := m.(*classifier)
	stages := onnxStages[m.Name()]
	if !ok || stages == nil {
		return nil, fmt.Errorf("%s: no ONNX export (only the CNNs mnist-cnn and cifar-cnn have one)", m.Name())
	}
	if err := checkVec("params", params, cm.size); err != nil {
		return nil, fmt.Errorf("%s: %w", cm.name, err)
	}
	byName := map[string]Param{}
	for _, p := range cm.params {
		byName[p.Name] = p
	}
	used := 0
	tensor := func(name string) (Param, []float32, error) {
		p, ok := byName[name]
		if !ok {
			return p, nil, fmt.Errorf("%s: no parameter tensor %s", cm.name, name)
		}
		used++
		return p, append([]float32(nil), params[p.Offset:p.Offset+p.Size()]...), nil
	}

	var (
		nodes []onnx.Node
		inits []onnx.Tensor
		cur   = ONNXInput
		shape = append([]int(nil), cm.shape...) // per sample
		desc  []string
	)
	add := func(n onnx.Node) {
		nodes = append(nodes, n)
		cur = n.Outputs[0]
	}
	for i, st := range stages {
		wp, w, err := tensor(st.name + ".w")
		if err != nil {
			return nil, err
		}
		bp, b, err := tensor(st.name + ".b")
		if err != nil {
			return nil, err
		}
		inits = append(inits,
			onnx.FloatTensor(wp.Name, w, wp.Shape...),
			onnx.FloatTensor(bp.Name, b, bp.Shape...))
		last := i == len(stages)-1
		if st.conv {
			ws := wp.Shape
			if len(ws) != 4 || len(shape) != 3 || ws[1] != shape[0] || bp.Size() != ws[0] ||
				ws[2] > shape[1] || ws[3] > shape[2] {
				return nil, fmt.Errorf("%s: %s weights %v and bias %v do not fit input %v", cm.name, st.name, ws, bp.Shape, shape)
			}
			oh, ow := shape[1]-ws[2]+1, shape[2]-ws[3]+1
			add(onnx.Node{Name: st.name, OpType: "Conv", Inputs: []string{cur, wp.Name, bp.Name}, Outputs: []string{st.name},
				Attrs: []onnx.Attr{
					onnx.IntsAttr("kernel_shape", int64(ws[2]), int64(ws[3])),
					onnx.IntsAttr("strides", 1, 1),
					onnx.IntsAttr("pads", 0, 0, 0, 0),
					onnx.IntsAttr("dilations", 1, 1),
					onnx.IntAttr("group", 1),
				}})
			add(onnx.Node{Name: st.name + ".relu", OpType: "Relu", Inputs: []string{cur}, Outputs: []string{st.name + ".relu"}})
			pool := strings.Replace(st.name, "conv", "pool", 1)
			add(onnx.Node{Name: pool, OpType: "MaxPool", Inputs: []string{cur}, Outputs: []string{pool},
				Attrs: []onnx.Attr{
					onnx.IntsAttr("kernel_shape", 2, 2),
					onnx.IntsAttr("strides", 2, 2),
					onnx.IntsAttr("pads", 0, 0, 0, 0),
				}})
			shape = []int{ws[0], oh / 2, ow / 2}
			desc = append(desc, fmt.Sprintf("%s: Conv %d→%d %d×%d (valid, stride 1, bias), Relu, MaxPool 2×2 stride 2 → [N,%d,%d,%d]",
				st.name, ws[1], ws[0], ws[2], ws[3], shape[0], shape[1], shape[2]))
			continue
		}
		if len(shape) > 1 {
			add(onnx.Node{Name: "flatten", OpType: "Flatten", Inputs: []string{cur}, Outputs: []string{"flatten"},
				Attrs: []onnx.Attr{onnx.IntAttr("axis", 1)}})
			n := 1
			for _, s := range shape {
				n *= s
			}
			desc = append(desc, fmt.Sprintf("flatten: [N,%s] → [N,%d] (NCHW order)", joinInts(shape), n))
			shape = []int{n}
		}
		ws := wp.Shape
		if len(ws) != 2 || ws[0] != shape[0] || bp.Size() != ws[1] {
			return nil, fmt.Errorf("%s: %s weights %v and bias %v do not fit input %v", cm.name, st.name, ws, bp.Shape, shape)
		}
		out := st.name
		if last {
			out = ONNXOutput
		}
		add(onnx.Node{Name: st.name, OpType: "Gemm", Inputs: []string{cur, wp.Name, bp.Name}, Outputs: []string{out},
			Attrs: []onnx.Attr{
				onnx.FloatAttr("alpha", 1),
				onnx.FloatAttr("beta", 1),
				onnx.IntAttr("transA", 0),
				onnx.IntAttr("transB", 0),
			}})
		act := ""
		if st.relu {
			add(onnx.Node{Name: st.name + ".relu", OpType: "Relu", Inputs: []string{cur}, Outputs: []string{st.name + ".relu"}})
			act = ", Relu"
		}
		shape = []int{ws[1]}
		desc = append(desc, fmt.Sprintf("%s: Gemm x·W+b, W [%d,%d]%s → [N,%d]", st.name, ws[0], ws[1], act, ws[1]))
	}
	if used != len(cm.params) {
		return nil, fmt.Errorf("%s: the export reads %d of the %d parameter tensors", cm.name, used, len(cm.params))
	}
	if len(shape) != 1 || shape[0] != cm.classes || cur != ONNXOutput {
		return nil, fmt.Errorf("%s: the export ends in %v, not the %d logits", cm.name, shape, cm.classes)
	}

	in := append([]onnx.Dim{{Param: ONNXBatch}}, onnx.Dims(cm.shape...)...)
	doc := fmt.Sprintf("gtstorm %s, %d parameters.\n"+
		"Input %q: float32 [N,%s], NCHW, N the (dynamic) batch size: the tensor the network reads, already scaled as gtstorm feeds it (pixel bytes divided by 255 and, where the run normalised its data, standardised per channel).\n"+
		"Output %q: float32 [N,%d], the class logits (unnormalised; softmax gives the probabilities, argmax the prediction).\n"+
		"Layers:\n  %s",
		cm.name, cm.size, ONNXInput, joinInts(cm.shape), ONNXOutput, cm.classes, strings.Join(desc, "\n  "))
	return &onnx.Model{
		Opsets:       []onnx.OpsetID{{Version: ONNXOpset}},
		ProducerName: "gtstorm",
		Graph: onnx.Graph{
			Name:         cm.name,
			DocString:    doc,
			Nodes:        nodes,
			Initializers: inits,
			Inputs: []onnx.ValueInfo{{Name: ONNXInput, ElemType: onnx.Float, Shape: in,
				DocString: fmt.Sprintf("float32 [N,%s] NCHW input, scaled as gtstorm feeds the network", joinInts(cm.shape))}},
			Outputs: []onnx.ValueInfo{{Name: ONNXOutput, ElemType: onnx.Float,
				Shape: []onnx.Dim{{Param: ONNXBatch}, {Value: int64(cm.classes)}}, DocString: "class logits"}},
		},
	}, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
