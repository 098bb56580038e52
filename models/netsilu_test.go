package models

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/onnx"
)

// siluNet is conv 3×3 1→3 (padding 1) → SiLU → max-pool 2 → Dense 6 →
// SiLU → Dense 4, on 1×6×6 samples.
func siluNet() (Model, error) {
	n := NewNet("silunet", []int{1, 6, 6}, 4)
	h := n.SiLU(n.Conv2D("c", n.Input(), Conv{Out: 3, Kernel: 3, Pad: 1, Bias: true}))
	h = n.SiLU(n.Dense("fc1", n.MaxPool(h, 2, 2), 6))
	return n.Model(n.Dense("fc2", h, 4))
}

// refSiLU is x·σ(x) in float64 from its definition.
func refSiLU(h []float64) {
	for i, v := range h {
		h[i] = v / (1 + math.Exp(-v))
	}
}

// refSiLUNet is siluNet's batch-mean loss in float64.
func refSiLUNet(m Model, p []float64, b data.Batch) float64 {
	ts := tensors(m, p) // c.w, c.b, fc1.w, fc1.b, fc2.w, fc2.b
	x, labels := refInputs(b)
	n := b.Len()
	h, _, _ := refConvSP(x, n, 1, 6, 6, ts[0], ts[1], 3, 3, 1, 1)
	refSiLU(h)
	h, _, _ = refPool(h, n, 3, 6, 6)
	h = refDense(h, n, 27, ts[2], ts[3], 6)
	refSiLU(h)
	return refCrossEntropy(refDense(h, n, 6, ts[4], ts[5], 4), labels, 4)
}

// TestSiLUMatchesReference checks siluNet against its float64 reference:
// the loss, and the gradient of every parameter tensor against central
// differences.
func TestSiLUMatchesReference(t *testing.T) {
	m, err := siluNet()
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(imageSet(3, 5, 4, true, 1, 6, 6), 0, 3, 1)
	params := m.Init(4)
	for i := range params {
		params[i] *= 3 // past the SiLU's minimum near −1.28, where its slope turns
	}
	loss, g := grad(t, newWorker(t, m), params, b)
	p64 := to64(params)
	if want := refSiLUNet(m, p64, b); math.Abs(float64(loss)-want) > 1e-5*math.Max(1, want) {
		t.Errorf("Grad loss %.7g, reference %.7g", loss, want)
	}
	checkFiniteDifferences(t, m, g, p64, b, refSiLUNet, 7)
}

// TestSiLURoundTrip exports siluNet to ONNX and imports it, and stores it
// as a NetSpec (JSON) and rebuilds it: each trains as the original, bit
// for bit. The export writes each SiLU as torch does at opset 13, a
// Sigmoid and the Mul of x and it, and the import makes one silu layer of
// the pair again.
func TestSiLURoundTrip(t *testing.T) {
	m, err := siluNet()
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(9)
	om, enc := marshalONNX(t, m, params)
	var ops []string
	sigmoidOf := map[string]string{} // a Sigmoid's output → its input
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
		switch n.OpType {
		case "Sigmoid":
			sigmoidOf[n.Outputs[0]] = n.Inputs[0]
		case "Mul":
			if len(n.Inputs) != 2 || sigmoidOf[n.Inputs[1]] != n.Inputs[0] {
				t.Errorf("Mul %q reads %v, want x and its Sigmoid", n.Name, n.Inputs)
			}
		}
	}
	if c := strings.Count(strings.Join(ops, " "), "Sigmoid Mul"); c != 2 {
		t.Errorf("the export's operators %v hold %d Sigmoid–Mul pairs, want 2", ops, c)
	}
	im, js := roundTrips(t, "silunet", m, params, enc, batchOf(imageSet(23, 5, 4, true, 1, 6, 6), seq(5)...))
	spec, _ := specJSON(t, m)
	var want, got []string
	for _, l := range spec.Layers {
		want = append(want, l.Op)
	}
	ispec, _ := specJSON(t, im)
	for _, l := range ispec.Layers {
		if l.Op != "flatten" { // the import's, before the Gemm
			got = append(got, l.Op)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the imported export's layers %v (flatten left out), want %v", got, want)
	}
	if !strings.Contains(string(js), `{"op":"silu","in":[1]}`) {
		t.Errorf("spec %s: no silu layer reading the conv", js)
	}
}

// TestImportSiLUPattern imports Mul of x and Sigmoid(x) in either order
// as one SiLU layer, the same logits as Net.SiLU's (the other Muls of a
// Sigmoid are products: TestImportMulOfTwoTensors).
func TestImportSiLUPattern(t *testing.T) {
	w := onnx.FloatTensor("w", ramp(32, 1), 16, 2)
	flat := node("Flatten", []string{"x"}, "f")
	mm := node("MatMul", []string{"f", "w"}, "z")
	for _, order := range [][]string{{"z", "s"}, {"s", "z"}} {
		enc := tinyONNX(t, 13, batchN, []onnx.Tensor{w}, flat, mm, node("Sigmoid", []string{"z"}, "s"), node("Mul", order, "y"))
		m, x0, err := ImportONNX("silu", enc, []int{1, 4, 4}, 2)
		if err != nil {
			t.Fatalf("Mul%v: %v", order, err)
		}
		spec, _ := Spec(m)
		var got []string
		for _, l := range spec.Layers {
			got = append(got, l.Op)
		}
		if !slices.Equal(got, []string{"flatten", "dense", "silu"}) {
			t.Errorf("Mul%v imports as %v, want flatten, dense (no bias), silu", order, got)
		}
		n := NewNet("silu", []int{1, 4, 4}, 2)
		want, err := n.Model(n.SiLU(n.DenseNoBias("w", n.Flatten(n.Input()), 2)))
		if err != nil {
			t.Fatal(err)
		}
		b := batchOf(imageSet(5, 3, 2, true, 1, 4, 4), 0, 1, 2)
		sameTraining(t, "Mul"+strings.Join(order, ","), want, x0, m, x0, b)
	}
}
