package models

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/onnx"
)

// actNet is conv 3×3 1→3 (padding 1) → LeakyReLU(alpha) → max-pool 2 →
// Dense 6 → Tanh → Dense 5 → Sigmoid → Dense 4, on 1×6×6 samples.
func actNet(alpha float32) (Model, error) {
	n := NewNet("actnet", []int{1, 6, 6}, 4)
	h := n.LeakyReLU(n.Conv2D("c", n.Input(), Conv{Out: 3, Kernel: 3, Pad: 1, Bias: true}), alpha)
	h = n.Tanh(n.Dense("fc1", n.MaxPool(h, 2, 2), 6))
	h = n.Sigmoid(n.Dense("fc2", h, 5))
	return n.Model(n.Dense("fc3", h, 4))
}

// refActNet is actNet's batch-mean loss in float64, from the activations'
// definitions.
func refActNet(alpha float32) refLoss {
	return func(m Model, p []float64, b data.Batch) float64 {
		ts := tensors(m, p) // c.w, c.b, fc1.w, fc1.b, fc2.w, fc2.b, fc3.w, fc3.b
		x, labels := refInputs(b)
		n := b.Len()
		h, _, _ := refConvSP(x, n, 1, 6, 6, ts[0], ts[1], 3, 3, 1, 1)
		for i, v := range h {
			if v <= 0 {
				h[i] = float64(alpha) * v
			}
		}
		h, _, _ = refPool(h, n, 3, 6, 6)
		h = refDense(h, n, 27, ts[2], ts[3], 6)
		for i, v := range h {
			h[i] = math.Tanh(v)
		}
		h = refDense(h, n, 6, ts[4], ts[5], 5)
		for i, v := range h {
			h[i] = 1 / (1 + math.Exp(-v))
		}
		return refCrossEntropy(refDense(h, n, 5, ts[6], ts[7], 4), labels, 4)
	}
}

// TestActivationsMatchReference checks actNet, for several slopes of its
// LeakyReLU, against its float64 reference: the loss, and the gradient of
// every parameter tensor against central differences.
func TestActivationsMatchReference(t *testing.T) {
	for _, alpha := range []float32{0.01, 0.1, 0, -0.5} {
		t.Run(fmt.Sprint(alpha), func(t *testing.T) {
			m, err := actNet(alpha)
			if err != nil {
				t.Fatal(err)
			}
			b := batchOf(imageSet(3, 5, 4, true, 1, 6, 6), 0, 3, 1)
			params := m.Init(4)
			for i := range params {
				params[i] *= 3 // into the activations' curved and saturating ranges
			}
			loss, g := grad(t, newWorker(t, m), params, b)
			ref, p64 := refActNet(alpha), to64(params)
			if want := ref(m, p64, b); math.Abs(float64(loss)-want) > 1e-5*math.Max(1, want) {
				t.Errorf("Grad loss %.7g, reference %.7g", loss, want)
			}
			checkFiniteDifferences(t, m, g, p64, b, ref, 7)
		})
	}
}

// TestActivationsRoundTrip exports actNet to ONNX and imports it, and
// stores it as a NetSpec (JSON) and rebuilds it: each trains as the
// original, bit for bit, and the export names LeakyRelu's alpha.
func TestActivationsRoundTrip(t *testing.T) {
	for _, alpha := range []float32{0.01, 0.1, 0, -0.5} {
		t.Run(fmt.Sprint(alpha), func(t *testing.T) {
			m, err := actNet(alpha)
			if err != nil {
				t.Fatal(err)
			}
			params := m.Init(9)
			om, enc := marshalONNX(t, m, params)
			var ops []string
			for _, n := range om.Graph.Nodes {
				ops = append(ops, n.OpType)
				if n.OpType == "LeakyRelu" {
					if a := attr(&n, "alpha"); a == nil || a.F != alpha {
						t.Errorf("LeakyRelu's alpha %+v, want %g", a, alpha)
					}
				}
			}
			for _, op := range []string{"LeakyRelu", "Tanh", "Sigmoid"} {
				if !slices.Contains(ops, op) {
					t.Errorf("the export's operators %v lack %s", ops, op)
				}
			}
			_, js := roundTrips(t, "actnet", m, params, enc, batchOf(imageSet(23, 5, 4, true, 1, 6, 6), seq(5)...))
			if !strings.Contains(string(js), fmt.Sprintf(`"op":"leakyrelu","in":[1],"alpha":%s`, mustJSON(t, alpha))) {
				t.Errorf("spec %s: the leakyrelu's alpha %g is not written", js, alpha)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestActivationsRefusals checks the errors of the activations' settings:
// a slope that is not a finite number, a spec's leakyrelu without alpha,
// and an ONNX LeakyRelu without alpha taking ONNX's default, 0.01.
func TestActivationsRefusals(t *testing.T) {
	for _, alpha := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
		if _, err := actNet(alpha); err == nil || !strings.Contains(err.Error(), "leakyrelu#2: negative slope") {
			t.Errorf("LeakyReLU(%g): %v, want a refusal naming the slope", alpha, err)
		}
	}
	s := NetSpec{Name: "x", Shape: []int{4}, Classes: 4, Layers: []LayerSpec{{Op: "leakyrelu", In: []int{0}}}}
	if _, err := NetFromSpec(s); err == nil || !strings.Contains(err.Error(), "layer 0 (leakyrelu): no alpha") {
		t.Errorf("leakyrelu without alpha: %v", err)
	}
	enc := tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("w", ramp(32, 1), 16, 2)},
		node("Flatten", []string{"x"}, "f"), node("MatMul", []string{"f", "w"}, "z"), node("LeakyRelu", []string{"z"}, "y"))
	m, _, err := ImportONNX("leaky", enc, []int{1, 4, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if spec, _ := Spec(m); spec.Layers[len(spec.Layers)-1].Alpha == nil || *spec.Layers[len(spec.Layers)-1].Alpha != 0.01 {
		t.Errorf("a LeakyRelu without alpha imports as %+v, want alpha 0.01", spec.Layers)
	}
}

// TestActivationsMemory checks that WorkerBytes counts an activation's
// buffers: its output and, in training, its input gradient, 8 bytes per
// value of a sample per sample.
func TestActivationsMemory(t *testing.T) {
	build := func(act func(*Net, Tensor) Tensor) Model {
		n := NewNet("mem", []int{4}, 3)
		h := n.Dense("fc1", n.Input(), 50)
		if act != nil {
			h = act(n, h)
		}
		m, err := n.Model(n.Dense("fc2", h, 3))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	const batch = 32
	base, err := WorkerBytes(build(nil), []int{batch}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, act := range map[string]func(*Net, Tensor) Tensor{
		"leakyrelu":   func(n *Net, x Tensor) Tensor { return n.LeakyReLU(x, 0.01) },
		"tanh":        (*Net).Tanh,
		"sigmoid":     (*Net).Sigmoid,
		"silu":        (*Net).SiLU,
		"elu":         func(n *Net, x Tensor) Tensor { return n.ELU(x, 1) },
		"softplus":    (*Net).Softplus,
		"hardsigmoid": (*Net).Hardsigmoid,
		"hardswish":   (*Net).Hardswish,
		"gelu":        (*Net).GELU,
	} {
		got, err := WorkerBytes(build(act), []int{batch}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := base + 8*50*batch; got != want {
			t.Errorf("%s: %d bytes, want %d (%d without it, plus its output and input gradient)", name, got, want, base)
		}
	}
}
