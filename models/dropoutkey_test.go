package models

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestMLPDropoutName checks the names mlp:H1,H2,…@p: New builds them with
// NewMLP's parameters, names them canonically so that the name builds the
// same network again (config.json, model files and resume record it), and
// drops @0.
func TestMLPDropoutName(t *testing.T) {
	for _, c := range []struct{ in, name string }{
		{"mlp:16,8@0.5", "mlp:16,8@0.5"},
		{"mlp:016,8@0.50", "mlp:16,8@0.5"},
		{"mlp:12@.25", "mlp:12@0.25"},
		{"mlp:12@1e-1", "mlp:12@0.1"},
		{"mlp:12@0.3", "mlp:12@0.3"},
		{"mlp:12@0", "mlp:12"},
	} {
		m := mustNew(t, c.in, []int{1, 6, 6}, 3)
		if m.Name() != c.name {
			t.Errorf("%s is named %q, want %q", c.in, m.Name(), c.name)
		}
		again := mustNew(t, m.Name(), []int{1, 6, 6}, 3)
		s1, err1 := Spec(m)
		s2, err2 := Spec(again)
		if err1 != nil || err2 != nil || !slices.EqualFunc(s1.Layers, s2.Layers, sameLayer) || again.Name() != m.Name() {
			t.Errorf("%s: its name %s builds another network (%v, %v)", c.in, m.Name(), err1, err2)
		}
		hidden, p, err := ParseMLP(m.Name())
		plain := mustNew(t, mlpName(hidden, 0), []int{1, 6, 6}, 3)
		if err != nil || !slices.Equal(m.Init(3), plain.Init(3)) || len(m.Params()) != len(plain.Params()) {
			t.Errorf("%s: parameters differ from %s's (%v)", c.in, plain.Name(), err)
		}
		drops := 0
		for i, l := range s1.Layers {
			if l.Op == "dropout" {
				drops++
				if l.Rate != p || s1.Layers[i-1].Op != "relu" {
					t.Errorf("%s: layer %d is dropout %g after %s, want dropout %g after relu", c.in, i, l.Rate, s1.Layers[i-1].Op, p)
				}
			}
		}
		if want := len(hidden); p == 0 && drops != 0 || p != 0 && drops != want || Stochastic(m) != (p != 0) {
			t.Errorf("%s: %d dropout layers, stochastic %v", c.in, drops, Stochastic(m))
		}
	}
}

// TestMLPDropoutRefuses checks that a malformed or out-of-range dropout
// rate is refused in one line naming the name and what it wants.
func TestMLPDropoutRefuses(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"mlp:16@1", `mlp:16@1: dropout rate "1", want a decimal number p with 0 ≤ p < 1 after "@", e.g. mlp:128,64@0.5`},
		{"mlp:16@1.5", `dropout rate "1.5", want a decimal number p with 0 ≤ p < 1`},
		{"mlp:16@-0.1", `dropout rate "-0.1"`},
		{"mlp:16@", `dropout rate ""`},
		{"mlp:16@abc", `dropout rate "abc"`},
		{"mlp:16@NaN", `dropout rate "NaN"`},
		{"mlp:16@Inf", `dropout rate "Inf"`},
		{"mlp:16@0x1p-1", `dropout rate "0x1p-1"`},
		{"mlp:16@0.5@0.5", `dropout rate "0.5@0.5"`},
		{"mlp:16@0.5,8", `dropout rate "0.5,8"`},
		{"mlp:16@0.99999999", `mlp:16@0.99999999: dropout rate "0.99999999" rounds to 1 in float32, want 0 ≤ p < 1`},
		{"mlp:@0.5", "mlp:@0.5: want at least one layer width"},
		{"mlp:16,@0.5", `layer width ""`},
		{"mlp:16x@0.5", `layer width "16x"`},
	} {
		_, err := New(c.name, []int{1, 28, 28}, 10)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%q): %v; want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestMLPDropoutDraws checks an mlp:…@p in training and evaluation: the
// same draw key gives the same gradient bit for bit, another key another
// gradient (so the masks are applied), a batch without a key is refused;
// evaluation is the identity: the loss and logits of the MLP without
// dropout, bit for bit, on the same parameters.
func TestMLPDropoutDraws(t *testing.T) {
	m := mustNew(t, "mlp:24,16@0.5", []int{1, 6, 6}, 4)
	plain := mustNew(t, "mlp:24,16", []int{1, 6, 6}, 4)
	params := m.Init(2)
	d := imageSet(7, 10, 4, true, 1, 6, 6)
	b := batchOf(d, seq(10)...)
	w := newWorker(t, m)
	b.Draw = 0x77
	l1, g1 := grad(t, w, params, b)
	_, g1b := grad(t, newWorker(t, m), params, b)
	b.Draw = 0x78
	l2, g2 := grad(t, w, params, b)
	if !slices.Equal(g1, g1b) {
		t.Error("the same draw key gives another gradient")
	}
	if slices.Equal(g1, g2) || l1 == l2 {
		t.Errorf("draw keys 0x77 and 0x78 give the same gradient (losses %g, %g)", l1, l2)
	}
	_, g0 := grad(t, newWorker(t, plain), params, batchOf(d, seq(10)...))
	if slices.Equal(g0, g1) {
		t.Error("the gradient with dropout is the gradient without")
	}
	b.Draw = 0
	if _, err := w.Grad(params, b, g2); err == nil || !strings.Contains(err.Error(), "mlp:24,16@0.5: has dropout") {
		t.Errorf("Grad without a draw key: %v", err)
	}
	s1, c1, err1 := w.Eval(params, b)
	s2, c2, err2 := newWorker(t, plain).Eval(params, b)
	z1, err3 := Logits(m, params, b)
	z2, err4 := Logits(plain, params, b)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || s1 != s2 || c1 != c2 || !slices.Equal(z1, z2) {
		t.Errorf("evaluation with dropout: loss %v, %d correct (%v); without: %v, %d (%v); logits equal %v (%v, %v)",
			s1, c1, err1, s2, c2, err2, slices.Equal(z1, z2), err3, err4)
	}
}

// TestMLPDropoutONNX exports an mlp:…@p: the export holds a Dropout node
// per hidden layer, passes the onnx checker (where Python with onnx runs)
// and onnxruntime's logits (where it runs), and imported again is the same
// network, with the same logits and training gradients bit for bit.
func TestMLPDropoutONNX(t *testing.T) {
	m := mustNew(t, "mlp:20,12@0.25", []int{1, 6, 6}, 10)
	params := onnxrtParams(m, 5)
	om, enc := marshalONNX(t, m, params)
	drops := 0
	for _, n := range om.Graph.Nodes {
		if n.OpType == "Dropout" {
			drops++
		}
	}
	if drops != 2 {
		t.Errorf("the export has %d Dropout nodes, want 2", drops)
	}
	im, x0, err := ImportONNX(m.Name(), enc, []int{1, 6, 6}, 10)
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(imageSet(51, 5, 10, true, 1, 6, 6), seq(5)...)
	sameTraining(t, "the imported export", m, params, im, x0, b)
	checkWithPython(t, enc, "mlp-dropout")
	if testing.Short() {
		return
	}
	node, modules := onnxRuntime(t)
	checkRuntime(t, "mlp:20,12@0.25's export", node, modules, enc, m, params, b)
}

// sameTraining checks that r at rx computes what m does at mx on b: the
// same logits and, for several draw keys, the same loss and gradient, bit
// for bit.
func sameTraining(t *testing.T, what string, m Model, mx []float32, r Model, rx []float32, b data.Batch) {
	t.Helper()
	if !slices.Equal(mx, rx) {
		t.Fatalf("%s: other parameters", what)
	}
	z1, err1 := Logits(m, mx, b)
	z2, err2 := Logits(r, rx, b)
	if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
		t.Errorf("%s: other logits (%v, %v)", what, err1, err2)
	}
	wm, wr := newWorker(t, m), newWorker(t, r)
	for _, draw := range []uint64{1, 0x5eed, 0x9e3779b97f4a7c15} {
		b.Draw = draw
		l1, g1 := grad(t, wm, mx, b)
		l2, g2 := grad(t, wr, rx, b)
		if l1 != l2 || !slices.Equal(g1, g2) {
			t.Errorf("%s: draw key %#x: loss %g, gradient differs (original's loss %g): other dropout masks", what, draw, l2, l1)
		}
	}
}

// TestDropoutKeySurvivesONNX exports dropNet, whose Dropout layers the
// import counts otherwise (the export's Flatten before a Dense becomes a
// layer), imports it, and checks that the import trains as the original
// bit for bit on the same batch and draw keys: its Dropout layers keep
// their keys (named dropout#3 and dropout#8 as in the original) though not
// their positions; so do a second round trip and the imported network
// stored as a NetSpec and rebuilt. A Dropout node of another name is
// keyed by its position, and two nodes of one dropout#K name do not
// collide.
func TestDropoutKeySurvivesONNX(t *testing.T) {
	m := mustDropNet(t)
	params := m.Init(9)
	b := batchOf(imageSet(3, 6, 4, true, 1, 6, 6), seq(6)...)
	im, x0 := exportImport(t, m, params)
	positions := func(m Model) (names []string, at []int) {
		for i, l := range m.(*classifier).net.layers {
			if l.kind == kindDropout {
				names, at = append(names, l.name), append(at, i)
			}
		}
		return names, at
	}
	n1, p1 := positions(m)
	n2, p2 := positions(im)
	if !slices.Equal(n1, []string{"dropout#3", "dropout#8"}) || !slices.Equal(n2, n1) {
		t.Errorf("dropout layers %v in the original, %v in the import", n1, n2)
	}
	if slices.Equal(p1, p2) {
		t.Fatalf("the import has its dropout layers at the original's positions %v: the test shows nothing", p1)
	}
	sameTraining(t, "the imported export", m, params, im, x0, b)
	again, x1 := exportImport(t, im, x0)
	sameTraining(t, "the export of the import, imported", m, params, again, x1, b)

	_, js := specJSON(t, im)
	if !strings.Contains(string(js), `{"op":"dropout","name":"dropout#8","in":[8],"rate":0.5}`) {
		t.Errorf("the import's spec does not record the moved dropout's name: %s", js)
	}
	back, r := fromSpecJSON(t, js)
	sameTraining(t, "the import's NetSpec, rebuilt", m, params, r, x0, b)
	// The original's spec is unchanged: no names where they are positions.
	if s, _ := Spec(m); slices.ContainsFunc(s.Layers, func(l LayerSpec) bool { return l.Op == "dropout" && l.Name != "" }) {
		t.Errorf("dropNet's spec names a dropout layer: %+v", s.Layers)
	}
	for _, c := range []struct{ name, want string }{{"dropout#0", "want the name dropout#K"}, {"drop", "want the name dropout#K"}, {"dropout#01", "want the name dropout#K"}} {
		bad := back
		bad.Layers = slices.Clone(back.Layers)
		for i, l := range bad.Layers {
			if l.Op == "dropout" {
				bad.Layers[i].Name = c.name
				break
			}
		}
		if _, err := NetFromSpec(bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a spec with a dropout named %q: %v, want an error containing %q", c.name, err, c.want)
		}
	}

	// Nodes named otherwise (torch's /drop/Dropout) are keyed by position;
	// a repeated dropout#K name takes the next free key.
	n := NewNet("keys", []int{4}, 2)
	x := n.Dense("fc", n.Input(), 3)
	x = n.dropout(x, 0.5, 7)
	x = n.dropout(x, 0.5, 7)
	x = n.Dropout(x, 0.5)
	if _, err := n.Model(n.Dense("out", x, 2)); err != nil {
		t.Fatal(err)
	}
	var keys []int
	for _, l := range n.layers {
		if l.kind == kindDropout {
			if want, _ := dropoutKey(l.name); want != l.key {
				t.Errorf("layer %s has key %d", l.name, l.key)
			}
			keys = append(keys, l.key)
		}
	}
	if !slices.Equal(keys, []int{7, 8, 3}) {
		t.Errorf("keys %v, want [7 8 3]", keys)
	}
}

// exportImport exports m at params to ONNX and imports the file again.
func exportImport(t *testing.T, m Model, params []float32) (Model, []float32) {
	t.Helper()
	_, enc := marshalONNX(t, m, params)
	cm := m.(*classifier)
	im, x0, err := ImportONNX(m.Name(), enc, cm.shape, cm.classes)
	if err != nil {
		t.Fatal(err)
	}
	return im, x0
}

// excludeNet pools with count_include_pad=False twice, over windows that
// the padding clips by different amounts (a 7×7 map, 3×3 stride 2 and 2×2
// stride 1, padding 1).
func excludeNet(exclude bool) (Model, error) {
	n := NewNet("exclude-pad", []int{1, 7, 7}, 4)
	h := n.ReLU(n.Conv2D("c", n.Input(), Conv{Out: 2, Kernel: 3, Pad: 1, Bias: true})) // [2,7,7]
	pool := (*Net).AvgPoolPadded
	if exclude {
		pool = (*Net).AvgPoolExcludePad
	}
	h = pool(n, h, 3, 2, 1) // [2,4,4]
	h = pool(n, h, 2, 1, 1) // [2,5,5]
	return n.Model(n.Dense("fc", h, 4))
}

// refExcludeNet is excludeNet's batch-mean loss in float64.
func refExcludeNet(exclude bool) refLoss {
	return func(m Model, p []float64, b data.Batch) float64 {
		ts := tensors(m, p) // c.w, c.b, fc.w, fc.b
		x, labels := refInputs(b)
		n := b.Len()
		h, _, _ := refConvSP(x, n, 1, 7, 7, ts[0], ts[1], 2, 3, 1, 1)
		h = refAvgPool(refRelu(h), n*2, 7, 3, 2, 1, exclude)
		h = refAvgPool(h, n*2, 4, 2, 1, 1, exclude)
		return refCrossEntropy(refDense(h, n, 50, ts[2], ts[3], 4), labels, 4)
	}
}

// refAvgPool averages planes of side×side over k×k windows of the given
// stride and zero padding: each window's in-plane sum over k², or, with
// exclude, over the count of its in-plane values.
func refAvgPool(x []float64, planes, side, k, stride, pad int, exclude bool) []float64 {
	o := (side+2*pad-k)/stride + 1
	out := make([]float64, planes*o*o)
	for p := range planes {
		for i := range o {
			for j := range o {
				sum, count := 0.0, 0
				for u := range k {
					for v := range k {
						y, z := i*stride+u-pad, j*stride+v-pad
						if y >= 0 && y < side && z >= 0 && z < side {
							sum += x[(p*side+y)*side+z]
							count++
						}
					}
				}
				div := k * k
				if exclude {
					div = count
				}
				out[(p*o+i)*o+j] = sum / float64(div)
			}
		}
	}
	return out
}

// TestAvgPoolExcludePadMatchesReference checks AvgPoolExcludePad against
// its float64 reference: Grad's loss and Eval's, and central differences of
// every parameter tensor (the convolution's take the gradient through both
// pools' backward). The reference with the padding counted differs, so the
// check tells the two divisors apart.
func TestAvgPoolExcludePadMatchesReference(t *testing.T) {
	m, err := excludeNet(true)
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(imageSet(13, 5, 4, true, 1, 7, 7), 0, 1, 2, 3, 4)
	params := m.Init(6)
	w := newWorker(t, m)
	loss, g := grad(t, w, params, b)
	ref, p64 := refExcludeNet(true), to64(params)
	want := ref(m, p64, b)
	if math.Abs(float64(loss)-want) > 1e-5*math.Max(1, want) {
		t.Errorf("Grad loss %.7g, reference %.7g", loss, want)
	}
	if counted := refExcludeNet(false)(m, p64, b); math.Abs(counted-want) < 1e-3 {
		t.Fatalf("the references with and without the padding counted agree (%.7g, %.7g): the test shows nothing", counted, want)
	}
	if sum, _, err := w.Eval(params, b); err != nil || math.Abs(sum/5-want) > 1e-5*math.Max(1, want) {
		t.Errorf("Eval loss %.7g (%v), reference %.7g", sum/5, err, want)
	}
	checkFiniteDifferences(t, m, g, p64, b, ref, 6)
	// The layers with the padding counted keep their bits.
	inc, err := excludeNet(false)
	if err != nil {
		t.Fatal(err)
	}
	li, _ := grad(t, newWorker(t, inc), params, b)
	if wantInc := refExcludeNet(false)(inc, p64, b); math.Abs(float64(li)-wantInc) > 1e-5*math.Max(1, wantInc) {
		t.Errorf("AvgPoolPadded: loss %.7g, reference %.7g", li, wantInc)
	}
}

// TestAvgPoolExcludePadONNX exports excludeNet (AveragePool nodes with
// count_include_pad 0) and imports it again: the same spec (exclude_pad
// kept, also through a NetSpec's JSON) and the same logits and gradient bit
// for bit; where they run, the onnx checker and onnxruntime's logits. A
// hand-written AveragePool with pads and count_include_pad 0 (the
// attribute absent, its default) imports as AvgPoolExcludePad; one after a
// zero Pad, whose zeros count, is refused.
func TestAvgPoolExcludePadONNX(t *testing.T) {
	m, err := excludeNet(true)
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(3)
	om, enc := marshalONNX(t, m, params)
	pools := 0
	for _, n := range om.Graph.Nodes {
		if n.OpType == "AveragePool" {
			pools++
			if a := attr(&n, "count_include_pad"); a == nil || a.I != 0 {
				t.Errorf("node %s: count_include_pad %+v, want 0", n.Name, a)
			}
		}
	}
	if pools != 2 {
		t.Errorf("%d AveragePool nodes, want 2", pools)
	}
	if !strings.Contains(om.Graph.DocString, "(count_include_pad 0)") {
		t.Errorf("the doc string does not say count_include_pad 0:\n%s", om.Graph.DocString)
	}
	im, x0, err := ImportONNX("exclude-pad", enc, []int{1, 7, 7}, 4)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := Spec(m)
	ispec, _ := Spec(im) // the Flatten the export writes before a Dense left out
	ispec.Layers = slices.DeleteFunc(ispec.Layers, func(l LayerSpec) bool { return l.Op == "flatten" })
	if !slices.EqualFunc(spec.Layers, ispec.Layers, func(a, b LayerSpec) bool {
		return a.Op == b.Op && a.Kernel == b.Kernel && a.Stride == b.Stride && a.Pad == b.Pad && a.ExcludePad == b.ExcludePad
	}) {
		t.Errorf("imported spec %+v, want %+v", ispec.Layers, spec.Layers)
	}
	_, js := specJSON(t, m)
	if strings.Count(string(js), `"exclude_pad":true`) != 2 {
		t.Errorf("spec %s: want two avgpools with exclude_pad", js)
	}
	_, r := fromSpecJSON(t, js)
	b := batchOf(imageSet(23, 5, 4, true, 1, 7, 7), seq(5)...)
	sameTraining(t, "the imported export", m, params, im, x0, b)
	sameTraining(t, "the spec rebuilt", m, params, r, params, b)
	checkWithPython(t, enc, "exclude-pad")
	if testing.Short() {
		return
	}
	node, modules := onnxRuntime(t)
	checkRuntime(t, "exclude-pad's export", node, modules, enc, m, params, b)
}

// TestImportONNXAvgPoolExcludePad imports a hand-written AveragePool with
// pads and count_include_pad 0 (the attribute absent: its default;
// torch's AvgPool2d(count_include_pad=False)), once refused: the network is
// the Net written by hand with AvgPoolExcludePad and the same weights,
// logit for logit, and not the one with the padding counted.
func TestImportONNXAvgPoolExcludePad(t *testing.T) {
	for _, attrs := range [][]onnx.Attr{nil, {onnx.IntAttr("count_include_pad", 0)}} {
		nodes, inits := convGemm([]onnx.Node{node("AveragePool", []string{"c"}, "m",
			append([]onnx.Attr{onnx.IntsAttr("kernel_shape", 3, 3), onnx.IntsAttr("pads", 1, 1, 1, 1)}, attrs...)...)})
		m, x0, err := ImportONNX("avg", tinyONNX(t, 13, batchN, inits, nodes...), []int{1, 4, 4}, 2)
		if err != nil {
			t.Fatal(err)
		}
		hand := func(exclude bool) Model {
			n := NewNet("avg", []int{1, 4, 4}, 2)
			h := n.Conv2D("cw", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
			if exclude {
				h = n.AvgPoolExcludePad(h, 3, 1, 1)
			} else {
				h = n.AvgPoolPadded(h, 3, 1, 1)
			}
			want, err := n.Model(n.Dense("fw", n.GlobalAvgPool(n.ReLU(h)), 2))
			if err != nil {
				t.Fatal(err)
			}
			return want
		}
		p := slices.Concat(ramp(36, 0), transpose2(&iconst{dims: []int{2, 4}, f: ramp(8, 1), float: true}).f, ramp(2, 2))
		b := batchOf(imageSet(9, 3, 2, true, 1, 4, 4), seq(3)...)
		z, err := Logits(m, x0, b)
		zx, errx := Logits(hand(true), p, b)
		zi, erri := Logits(hand(false), p, b)
		if err != nil || errx != nil || erri != nil || !slices.Equal(x0, p) || !slices.Equal(z, zx) || slices.Equal(z, zi) {
			t.Errorf("attributes %v: logits %v (%v), the hand-written AvgPoolExcludePad's %v (%v), AvgPoolPadded's %v (%v)", attrs, z, err, zx, errx, zi, erri)
		}
	}
}
