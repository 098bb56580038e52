package models

import (
	"slices"
	"strings"
	"testing"
)

// ceilNet is conv 3×3 1→3 (padding 1) → ReLU → max-pool 3 stride 2 in
// ceil mode (9 → 5: the last window holds 2 rows) → avg-pool 3 stride 2
// padding 1 in ceil mode (5 → 3: exact) → avg-pool 2 stride 2 in ceil mode
// with ExcludePad (3 → 2: the last window holds 1 row) → Dense 4, on 1×9×9
// samples.
func ceilNet() (Model, error) {
	n := NewNet("ceilnet", []int{1, 9, 9}, 4)
	h := n.ReLU(n.Conv2D("c", n.Input(), Conv{Out: 3, Kernel: 3, Pad: 1, Bias: true}))
	h = n.MaxPool2D(h, Pooling{Kernel: 3, Stride: 2, Ceil: true})
	h = n.AvgPool2D(h, Pooling{Kernel: 3, Stride: 2, Pad: 1, Ceil: true})
	h = n.AvgPool2D(h, Pooling{Kernel: 2, Ceil: true})
	return n.Model(n.Dense("fc", h, 4))
}

// TestPoolingShapes checks the output shapes of MaxPool2D and AvgPool2D
// against PyTorch's (floor and ceil mode, a Stride of 0 as the kernel),
// that without Ceil they are the older methods' layers, and their errors.
func TestPoolingShapes(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		p    Pooling
		want []int
	}{
		{[]int{6, 28, 28}, Pooling{Kernel: 3, Stride: 2, Ceil: true}, []int{6, 14, 14}},
		{[]int{6, 28, 28}, Pooling{Kernel: 3, Stride: 2}, []int{6, 13, 13}},
		{[]int{8, 12, 12}, Pooling{Kernel: 3, Stride: 2, Pad: 1, Ceil: true}, []int{8, 7, 7}},
		{[]int{1, 5, 7}, Pooling{Kernel: 2, Pad: 1, Ceil: true}, []int{1, 3, 4}}, // a window starting in the padding is dropped
		{[]int{2, 7, 9}, Pooling{Kernel: 2, Ceil: true}, []int{2, 4, 5}},
		{[]int{2, 9, 9}, Pooling{Kernel: 3, Stride: 2, Ceil: true}, []int{2, 4, 4}}, // exact
	} {
		for _, avg := range []bool{false, true} {
			n := NewNet("pool", tt.in, 2)
			var h Tensor
			if avg {
				h = n.AvgPool2D(n.Input(), tt.p)
			} else {
				h = n.MaxPool2D(n.Input(), tt.p)
			}
			if got := n.Shape(h); n.Err() != nil || !slices.Equal(got, tt.want) {
				t.Errorf("%v on %v (avg %v): shape %v, error %v; want %v", tt.p, tt.in, avg, got, n.Err(), tt.want)
			}
		}
	}
	n := NewNet("pool", []int{2, 9, 9}, 2)
	n.MaxPool2D(n.Input(), Pooling{Kernel: 3, Stride: 2, Pad: 1})
	n.MaxPoolPadded(n.Input(), 3, 2, 1)
	n.AvgPool2D(n.Input(), Pooling{Kernel: 3, Stride: 2, Pad: 1, ExcludePad: true})
	n.AvgPoolExcludePad(n.Input(), 3, 2, 1)
	n.AvgPool2D(n.Input(), Pooling{Kernel: 2})
	n.AvgPool(n.Input(), 2, 2)
	for i := 0; i < len(n.layers); i += 2 {
		a, b := n.layers[i], n.layers[i+1]
		if a.kind != b.kind || a.k != b.k || a.s != b.s || a.pad != b.pad || a.exPad != b.exPad || a.ceil || b.ceil ||
			!slices.Equal(n.shapes[a.out], n.shapes[b.out]) {
			t.Errorf("%s: %+v, the older method's %+v", a.name, a, b)
		}
	}
	for _, tt := range []struct {
		p    Pooling
		avg  bool
		want string
	}{
		{Pooling{Kernel: 3, Stride: 2, ExcludePad: true}, false, "ExcludePad is set"},
		{Pooling{Kernel: 3, Stride: 2, Pad: 2, Ceil: true}, true, "0 ≤ padding ≤ window/2"},
		{Pooling{Kernel: 12, Stride: 2, Ceil: true}, true, "does not fit"},
	} {
		n := NewNet("pool", []int{1, 9, 9}, 2)
		if tt.avg {
			n.AvgPool2D(n.Input(), tt.p)
		} else {
			n.MaxPool2D(n.Input(), tt.p)
		}
		if err := n.Err(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one saying %q", tt.p, err, tt.want)
		}
	}
}

// TestCeilPoolRoundTrip exports ceilNet to ONNX (each pool with ceil_mode
// 1) and imports it, and stores it as a NetSpec (JSON, "ceil":true) and
// rebuilds it: each trains as the original, bit for bit.
func TestCeilPoolRoundTrip(t *testing.T) {
	m, err := ceilNet()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*classifier).net.shapes[5]; !slices.Equal(got, []int{3, 2, 2}) {
		t.Fatalf("ceilNet's last pool gives %v, want [3 2 2]", got)
	}
	params := m.Init(9)
	om, enc := marshalONNX(t, m, params)
	pools := 0
	for _, n := range om.Graph.Nodes {
		if n.OpType == "MaxPool" || n.OpType == "AveragePool" {
			pools++
			if attrInt(&n, "ceil_mode", 0) != 1 {
				t.Errorf("%s %q: ceil_mode %d, want 1", n.OpType, n.Name, attrInt(&n, "ceil_mode", 0))
			}
		}
	}
	if pools != 3 {
		t.Errorf("the export holds %d pools, want 3", pools)
	}
	_, js := roundTrips(t, "ceilnet", m, params, enc, batchOf(imageSet(23, 5, 4, true, 1, 9, 9), seq(5)...))
	if c := strings.Count(string(js), `"ceil":true`); c != 3 {
		t.Errorf("spec %s: %d pools with \"ceil\":true, want 3", js, c)
	}
}

// TestCeilAfterPad checks that the import refuses a ceil-mode pool after
// a zero Pad only where the node, pooling the Pad's output, keeps a last
// window that PyTorch's ceil mode drops.
func TestCeilAfterPad(t *testing.T) {
	for _, tt := range []struct {
		x                    []int
		k, stride, pad, zero int
		ok                   bool
	}{
		{[]int{8, 12, 12}, 3, 2, 1, 1, true}, // ceil_pool.onnx's AvgPool2d(3, 2, padding=1, ceil_mode=True)
		{[]int{1, 5, 5}, 2, 2, 1, 1, false},  // a fourth window would start in the Pad's zeros
		{[]int{1, 5, 5}, 2, 2, 1, 0, true},   // the node's own pads: the same rule as PyTorch's
		{[]int{1, 6, 5}, 2, 2, 1, 1, false},  // columns only
	} {
		if err := ceilAfterPad(tt.x, tt.k, tt.stride, tt.pad, tt.zero, true); (err == nil) != tt.ok {
			t.Errorf("%+v: %v, want ok %v", tt, err, tt.ok)
		}
	}
}
