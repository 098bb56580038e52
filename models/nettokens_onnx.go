package models

import "github.com/gtstorm/gtstorm/internal/onnx"

// The ONNX export of the token layers, in the spelling torch writes a
// ViT's or an MLP-Mixer's at opset 13 (which the import reads back): an
// image [N,C,H,W] becomes the sequence [N,T,C], T = H·W, by Reshape
// [0,C,T] and Transpose perm [0,2,1] (x.flatten(2).transpose(1, 2)), and
// goes back by the Transpose and a Reshape. Each layer's intermediate
// tensors, and the nodes that write them, are named after the layer
// (name.seq, name.scores, …), its last node the layer's name, as the other
// layers'; its parameters keep the Net's shapes, which broadcast.

// tokenNodes appends the nodes of one token layer l.
type tokenNodes struct {
	g *onnxGraph
	l netLayer
}

// nm returns the name of l's tensor s: l.name + "." + s.
func (t tokenNodes) nm(s string) string { return t.l.name + "." + s }

// op appends a node of type op reading in and writing l's tensor s, and
// returns its name.
func (t tokenNodes) op(s, op string, in []string, attrs ...onnx.Attr) string {
	t.g.node(t.nm(s), op, in, t.nm(s), attrs...)
	return t.nm(s)
}

// ints adds the int64 initialiser l's s holding v, of shape [len(v)], and
// returns its name.
func (t tokenNodes) ints(s string, v ...int) string {
	w := make([]int64, len(v))
	for i, x := range v {
		w[i] = int64(x)
	}
	t.g.inits = append(t.g.inits, onnx.Int64Tensor(t.nm(s), w, len(v)))
	return t.nm(s)
}

// index adds the scalar int64 initialiser l's s holding i, and returns its
// name.
func (t tokenNodes) index(s string, i int) string {
	t.g.inits = append(t.g.inits, onnx.Int64Tensor(t.nm(s), []int64{int64(i)}))
	return t.nm(s)
}

// seq appends Reshape [0,C,T] and Transpose perm [0,2,1] of the image x
// [N,C,H,W], and returns the sequence [N,T,C].
func (t tokenNodes) seq(x string, in []int) string {
	flat := t.op("flat", "Reshape", []string{x, t.ints("flatshape", 0, in[0], in[1]*in[2])})
	return t.op("seq", "Transpose", []string{flat}, onnx.IntsAttr("perm", 0, 2, 1))
}

// image appends Transpose perm [0,2,1] of the sequence s [N,T,C] and the
// Reshape to [N,shape...] writing out.
func (t tokenNodes) image(s, out string, shape []int) {
	back := t.op("unseq", "Transpose", []string{s}, onnx.IntsAttr("perm", 0, 2, 1))
	t.g.node(t.l.name, "Reshape", []string{back, t.ints("shape", append([]int{0}, shape...)...)}, out)
}

// addTokens appends Tokens: Reshape to [0,C,T,1].
func (g *onnxGraph) addTokens(l netLayer, x, out string, shape []int) {
	t := tokenNodes{g, l}
	g.node(l.name, "Reshape", []string{x, t.ints("shape", 0, shape[0], shape[1], 1)}, out)
	g.describe("%s: Tokens, Reshape → [N,%s]", l.name, joinInts(shape))
}

// addAttention appends Attention as torch writes timm's attention of a
// qkv Linear: the sequence [N,T,3D] reshaped to [N,T,3,h,dh] and
// transposed to [3,N,h,T,dh], Gathers of q, k and v, MatMul of q and
// the transposed k, Mul by the scale, Softmax over the keys, MatMul by
// v, Transpose to [N,T,h,dh], Reshape to [N,T,D] and back to the image.
func (g *onnxGraph) addAttention(l netLayer, x, out string, in, shape []int) {
	t := tokenNodes{g, l}
	d, tok := in[0]/3, in[1]*in[2]
	dh := d / l.heads
	s := t.seq(x, in)
	split := t.op("split", "Reshape", []string{s, t.ints("splitshape", 0, tok, 3, l.heads, dh)})
	parts := t.op("parts", "Transpose", []string{split}, onnx.IntsAttr("perm", 2, 0, 3, 1, 4))
	axis0 := onnx.IntAttr("axis", 0)
	q := t.op("q", "Gather", []string{parts, t.index("qi", 0)}, axis0)
	k := t.op("k", "Gather", []string{parts, t.index("ki", 1)}, axis0)
	v := t.op("v", "Gather", []string{parts, t.index("vi", 2)}, axis0)
	kT := t.op("kT", "Transpose", []string{k}, onnx.IntsAttr("perm", 0, 1, 3, 2))
	scores := t.op("scores", "MatMul", []string{q, kT})
	g.inits = append(g.inits, onnx.FloatTensor(t.nm("scale"), []float32{l.scale}))
	scaled := t.op("scaled", "Mul", []string{scores, t.nm("scale")})
	probs := t.op("probs", "Softmax", []string{scaled}, onnx.IntAttr("axis", -1))
	heads := t.op("heads", "MatMul", []string{probs, v})
	merged := t.op("merged", "Transpose", []string{heads}, onnx.IntsAttr("perm", 0, 2, 1, 3))
	joined := t.op("joined", "Reshape", []string{merged, t.ints("joinshape", 0, tok, d)})
	t.image(joined, out, shape)
	g.describe("%s: Attention, %d heads of %d, scale %g, over %d positions (Reshape, Transpose, Reshape, Transpose, Gather q k v, Transpose, MatMul, Mul, Softmax, MatMul, Transpose, Reshape, Transpose, Reshape) → [N,%s]",
		l.name, l.heads, dh, l.scale, tok, joinInts(shape))
}

// addTokenLinear appends TokenLinear: Reshape to [0,C,P], MatMul by w
// [P,K], Add b [K] (where it has a bias), Reshape to [0,C,K,1].
func (g *onnxGraph) addTokenLinear(l netLayer, x, out string, in, shape []int) {
	t := tokenNodes{g, l}
	flat := t.op("flat", "Reshape", []string{x, t.ints("flatshape", 0, in[0], in[1]*in[2])})
	y := t.op("matmul", "MatMul", []string{flat, l.name + ".w"})
	bias := "no bias"
	if !l.noBias {
		y, bias = t.op("bias", "Add", []string{y, l.name + ".b"}), "Add b"
	}
	g.node(l.name, "Reshape", []string{y, t.ints("shape", 0, shape[0], shape[1], 1)}, out)
	g.describe("%s: TokenLinear %d → %d positions (Reshape, MatMul, %s, Reshape) → [N,%s]", l.name, in[1]*in[2], l.units, bias, joinInts(shape))
}

// addClassToken appends ClassToken: the class token c [D] Expanded to
// [N,1,D] (N read by Shape and Slice of x) and Concatenated before the
// sequence [N,T,D] along axis 1.
func (g *onnxGraph) addClassToken(l netLayer, x, out string, in, shape []int) {
	t := tokenNodes{g, l}
	s := t.seq(x, in)
	dims := t.op("dims", "Shape", []string{x})
	batch := t.op("batch", "Slice", []string{dims, t.ints("starts", 0), t.ints("ends", 1), t.ints("axes", 0)})
	to := t.op("expandshape", "Concat", []string{batch, t.ints("rowshape", 1, in[0])}, onnx.IntAttr("axis", 0))
	cls := t.op("cls", "Expand", []string{l.name + ".c", to})
	cat := t.op("cat", "Concat", []string{cls, s}, onnx.IntAttr("axis", 1))
	t.image(cat, out, shape)
	g.describe("%s: ClassToken (Reshape, Transpose, Shape, Slice, Concat, Expand, Concat axis 1, Transpose, Reshape) → [N,%s]", l.name, joinInts(shape))
}

// addPositionEmbedding appends PositionEmbedding: Add p [T,D] to the
// sequence [N,T,D].
func (g *onnxGraph) addPositionEmbedding(l netLayer, x, out string, in []int) {
	t := tokenNodes{g, l}
	sum := t.op("add", "Add", []string{t.seq(x, in), l.name + ".p"})
	t.image(sum, out, in)
	g.describe("%s: PositionEmbedding [%d,%d] (Reshape, Transpose, Add, Transpose, Reshape) → [N,%s]", l.name, in[1]*in[2], in[0], joinInts(in))
}

// addToken appends Token: Gather of position i (axis 1) of the sequence
// [N,T,D], writing [N,D].
func (g *onnxGraph) addToken(l netLayer, x, out string, in []int) {
	t := tokenNodes{g, l}
	s := t.seq(x, in)
	g.node(l.name, "Gather", []string{s, t.index("index", l.index)}, out, onnx.IntAttr("axis", 1))
	g.describe("%s: Token %d of %d (Reshape, Transpose, Gather axis 1) → [N,%d]", l.name, l.index, in[1]*in[2], in[0])
}

// addAttentionPool appends AttentionPool as torch writes CCT's SeqPool:
// the tokens [N,T,D] and their scores [N,T,1] as sequences, Softmax over
// the positions (axis 1), Transpose perm [0,2,1], MatMul by the tokens and
// Squeeze of axis 1, writing [N,D].
func (g *onnxGraph) addAttentionPool(l netLayer, x, out string, in []int) {
	t := tokenNodes{g, l}
	scores := tokenNodes{g, netLayer{name: l.name + ".score"}}.seq(g.names[l.in[1]], g.cm.net.shapes[l.in[1]])
	a := t.op("softmax", "Softmax", []string{scores}, onnx.IntAttr("axis", 1))
	at := t.op("weights", "Transpose", []string{a}, onnx.IntsAttr("perm", 0, 2, 1))
	pooled := t.op("pooled", "MatMul", []string{at, t.seq(x, in)})
	g.node(l.name, "Squeeze", []string{pooled, t.ints("axes", 1)}, out)
	g.describe("%s: AttentionPool (Softmax of the scores over the positions, Transpose, MatMul by the tokens, Squeeze) → [N,%d]", l.name, in[0])
}

// addTokenRange appends TokenRange: Slice of positions [from,from+count)
// (axis 1) of the sequence [N,T,D], then back to the image [N,D,count,1].
func (g *onnxGraph) addTokenRange(l netLayer, x, out string, in []int) {
	t := tokenNodes{g, l}
	s := t.op("slice", "Slice", []string{t.seq(x, in), t.ints("starts", l.index), t.ints("ends", l.index+l.count), t.ints("axes", 1)})
	t.image(s, out, []int{in[0], l.count, 1})
	g.describe("%s: TokenRange [%d,%d) of %d (Reshape, Transpose, Slice axis 1, Transpose, Reshape) → [N,%d,%d,1]", l.name, l.index, l.index+l.count, in[1]*in[2], in[0], l.count)
}
