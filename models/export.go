package models

import (
	"fmt"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// ONNX opset, input and output of the exported classifiers.
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

// onnxStagesOf returns the blocks of cm's logits function: onnxStages for
// the CNNs, and for an MLP its hidden layers fc1, fc2, … with ReLU, then
// the output layer out.
func onnxStagesOf(cm *classifier) []stage {
	if !strings.HasPrefix(cm.name, MLPPrefix) {
		return onnxStages[cm.name]
	}
	var stages []stage
	for _, p := range cm.params {
		if name, ok := strings.CutSuffix(p.Name, ".w"); ok {
			stages = append(stages, stage{name: name, relu: name != "out"})
		}
	}
	return stages
}

// ONNX returns the classifier m (a CNN of NewMNISTCNN, NewCIFARCNN or New,
// or an MLP) with parameters params as an ONNX model of opset ONNXOpset. Its graph takes ONNXInput,
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
	if !ok {
		return nil, fmt.Errorf("%s: no ONNX export (only the image classifiers %s, %s and %s… have one)", m.Name(), MNISTCNNName, CIFARCNNName, MLPPrefix)
	}
	stages := onnxStagesOf(cm)
	if err := checkVec("params", params, cm.size); err != nil {
		return nil, fmt.Errorf("%s: %w", cm.name, err)
	}
	g := newONNXGraph(cm, params)
	for i, st := range stages {
		if err := g.addStage(st, i == len(stages)-1); err != nil {
			return nil, err
		}
	}
	if err := g.checkComplete(); err != nil {
		return nil, err
	}
	return g.model(), nil
}

// onnxGraph accumulates the nodes and initialisers of a CNN's ONNX export,
// one stage at a time, tracking the tensor the graph has reached.
type onnxGraph struct {
	cm     *classifier
	params []float32
	byName map[string]Param
	used   int // parameter tensors read so far

	nodes []onnx.Node
	inits []onnx.Tensor
	cur   string   // the tensor the last node produced
	shape []int    // cur's shape per sample
	desc  []string // one line per block, for the model's doc string
}

// newONNXGraph returns an empty graph over cm's parameters params, at the
// graph's input.
func newONNXGraph(cm *classifier, params []float32) *onnxGraph {
	byName := map[string]Param{}
	for _, p := range cm.params {
		byName[p.Name] = p
	}
	return &onnxGraph{
		cm:     cm,
		params: params,
		byName: byName,
		cur:    ONNXInput,
		shape:  append([]int(nil), cm.shape...),
	}
}

// tensor returns the parameter tensor name and a copy of its values.
func (g *onnxGraph) tensor(name string) (Param, []float32, error) {
	p, ok := g.byName[name]
	if !ok {
		return p, nil, fmt.Errorf("%s: no parameter tensor %s", g.cm.name, name)
	}
	g.used++
	return p, append([]float32(nil), g.params[p.Offset:p.Offset+p.Size()]...), nil
}

// add appends n to the graph and moves to its first output.
func (g *onnxGraph) add(n onnx.Node) {
	g.nodes = append(g.nodes, n)
	g.cur = n.Outputs[0]
}

// addRelu appends a Relu named name+".relu" on the current tensor.
func (g *onnxGraph) addRelu(name string) {
	g.add(onnx.Node{Name: name + ".relu", OpType: "Relu", Inputs: []string{g.cur}, Outputs: []string{name + ".relu"}})
}

// addStage adds st's weights and bias as initialisers and its block as
// nodes; last marks the stage producing the logits.
func (g *onnxGraph) addStage(st stage, last bool) error {
	wp, w, err := g.tensor(st.name + ".w")
	if err != nil {
		return err
	}
	bp, b, err := g.tensor(st.name + ".b")
	if err != nil {
		return err
	}
	g.inits = append(g.inits,
		onnx.FloatTensor(wp.Name, w, wp.Shape...),
		onnx.FloatTensor(bp.Name, b, bp.Shape...))
	if st.conv {
		return g.addConv(st, wp, bp)
	}
	return g.addDense(st, wp, bp, last)
}

// addConv adds a convolution block: Conv with bias, Relu, then MaxPool
// 2×2 stride 2.
func (g *onnxGraph) addConv(st stage, wp, bp Param) error {
	ws, shape := wp.Shape, g.shape
	if len(ws) != 4 || len(shape) != 3 || ws[1] != shape[0] || bp.Size() != ws[0] ||
		ws[2] > shape[1] || ws[3] > shape[2] {
		return fmt.Errorf("%s: %s weights %v and bias %v do not fit input %v", g.cm.name, st.name, ws, bp.Shape, shape)
	}
	oh, ow := shape[1]-ws[2]+1, shape[2]-ws[3]+1
	g.add(onnx.Node{Name: st.name, OpType: "Conv", Inputs: []string{g.cur, wp.Name, bp.Name}, Outputs: []string{st.name},
		Attrs: []onnx.Attr{
			onnx.IntsAttr("kernel_shape", int64(ws[2]), int64(ws[3])),
			onnx.IntsAttr("strides", 1, 1),
			onnx.IntsAttr("pads", 0, 0, 0, 0),
			onnx.IntsAttr("dilations", 1, 1),
			onnx.IntAttr("group", 1),
		}})
	g.addRelu(st.name)
	pool := strings.Replace(st.name, "conv", "pool", 1)
	g.add(onnx.Node{Name: pool, OpType: "MaxPool", Inputs: []string{g.cur}, Outputs: []string{pool},
		Attrs: []onnx.Attr{
			onnx.IntsAttr("kernel_shape", 2, 2),
			onnx.IntsAttr("strides", 2, 2),
			onnx.IntsAttr("pads", 0, 0, 0, 0),
		}})
	g.shape = []int{ws[0], oh / 2, ow / 2}
	g.desc = append(g.desc, fmt.Sprintf("%s: Conv %d→%d %d×%d (valid, stride 1, bias), Relu, MaxPool 2×2 stride 2 → [N,%d,%d,%d]",
		st.name, ws[1], ws[0], ws[2], ws[3], g.shape[0], g.shape[1], g.shape[2]))
	return nil
}

// flatten adds a Flatten to [N, C·H·W] if the current tensor is not flat
// already.
func (g *onnxGraph) flatten() {
	if len(g.shape) <= 1 {
		return
	}
	g.add(onnx.Node{Name: "flatten", OpType: "Flatten", Inputs: []string{g.cur}, Outputs: []string{"flatten"},
		Attrs: []onnx.Attr{onnx.IntAttr("axis", 1)}})
	n := 1
	for _, s := range g.shape {
		n *= s
	}
	g.desc = append(g.desc, fmt.Sprintf("flatten: [N,%s] → [N,%d] (NCHW order)", joinInts(g.shape), n))
	g.shape = []int{n}
}

// addDense adds a dense block, flattening its input first: Gemm x·W+b,
// then Relu where st asks for one. The last stage writes ONNXOutput.
func (g *onnxGraph) addDense(st stage, wp, bp Param, last bool) error {
	g.flatten()
	ws := wp.Shape
	if len(ws) != 2 || ws[0] != g.shape[0] || bp.Size() != ws[1] {
		return fmt.Errorf("%s: %s weights %v and bias %v do not fit input %v", g.cm.name, st.name, ws, bp.Shape, g.shape)
	}
	out := st.name
	if last {
		out = ONNXOutput
	}
	g.add(onnx.Node{Name: st.name, OpType: "Gemm", Inputs: []string{g.cur, wp.Name, bp.Name}, Outputs: []string{out},
		Attrs: []onnx.Attr{
			onnx.FloatAttr("alpha", 1),
			onnx.FloatAttr("beta", 1),
			onnx.IntAttr("transA", 0),
			onnx.IntAttr("transB", 0),
		}})
	act := ""
	if st.relu {
		g.addRelu(st.name)
		act = ", Relu"
	}
	g.shape = []int{ws[1]}
	g.desc = append(g.desc, fmt.Sprintf("%s: Gemm x·W+b, W [%d,%d]%s → [N,%d]", st.name, ws[0], ws[1], act, ws[1]))
	return nil
}

// checkComplete reports an error unless the graph read every parameter
// tensor and ends in the logits.
func (g *onnxGraph) checkComplete() error {
	cm := g.cm
	if g.used != len(cm.params) {
		return fmt.Errorf("%s: the export reads %d of the %d parameter tensors", cm.name, g.used, len(cm.params))
	}
	if len(g.shape) != 1 || g.shape[0] != cm.classes || g.cur != ONNXOutput {
		return fmt.Errorf("%s: the export ends in %v, not the %d logits", cm.name, g.shape, cm.classes)
	}
	return nil
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
