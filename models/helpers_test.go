package models

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/onnx"
)

// Synthetic datasets in each storage form the models read. Their values are
// random but fixed by seed, so every test is reproducible.

// imageSet returns n random byte images of the given shape with labels in
// [0, classes), normalised per channel when normalise is set.
func imageSet(seed uint64, n, classes int, normalise bool, shape ...int) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &data.Dataset{Name: "synthetic-images", Shape: shape, Classes: classes}
	d.Labels = make([]uint8, n)
	for i := range d.Labels {
		d.Labels[i] = uint8(rng.IntN(classes))
	}
	d.Bytes = make([]uint8, n*d.Dim())
	for i := range d.Bytes {
		d.Bytes[i] = uint8(rng.IntN(256))
	}
	if normalise {
		for c := 0; c < shape[0]; c++ {
			d.Mean = append(d.Mean, 0.45+0.02*float32(c))
			d.Std = append(d.Std, 0.25+0.01*float32(c))
		}
	}
	return d
}

// sparseSet returns n sparse rows over dim features with about density·dim
// non-zeros each (at least one) and binary labels.
func sparseSet(seed uint64, n, dim int, density float64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 2))
	d := &data.Dataset{Name: "synthetic-sparse", Shape: []int{dim}, Classes: 2}
	d.Labels = make([]uint8, n)
	d.RowPtr = []int{0}
	for i := 0; i < n; i++ {
		d.Labels[i] = uint8(rng.IntN(2))
		for j := 0; j < dim; j++ {
			if rng.Float64() < density || (j == dim-1 && len(d.Cols) == d.RowPtr[i]) {
				d.Cols = append(d.Cols, int32(j))
				d.Vals = append(d.Vals, float32(rng.NormFloat64()))
			}
		}
		d.RowPtr = append(d.RowPtr, len(d.Cols))
	}
	return d
}

// densify returns d with the same samples stored as dense float32.
func densify(d *data.Dataset) *data.Dataset {
	out := &data.Dataset{Name: d.Name + "-dense", Shape: d.Shape, Classes: d.Classes, Labels: d.Labels}
	out.Floats = make([]float32, d.Len()*d.Dim())
	for i := 0; i < d.Len(); i++ {
		d.Dense(i, out.Floats[i*d.Dim():(i+1)*d.Dim()])
	}
	return out
}

func batchOf(d *data.Dataset, index ...int) data.Batch { return data.Batch{Data: d, Index: index} }

func newWorker(t testing.TB, m Model) Worker {
	t.Helper()
	w, err := m.NewWorker()
	if err != nil {
		t.Fatalf("%s: NewWorker: %v", m.Name(), err)
	}
	return w
}

func grad(t testing.TB, w Worker, params []float32, b data.Batch) (float32, []float32) {
	t.Helper()
	g := make([]float32, len(params))
	loss, err := w.Grad(params, b, g)
	if err != nil {
		t.Fatalf("Grad(%v): %v", b, err)
	}
	return loss, g
}

func to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// checkFiniteDifferences checks the gradient g of m at the float64
// parameters p64 on batch b against central finite differences of the
// float64 reference loss ref, at five coordinates of each parameter (its
// first and last, and three drawn from seed), and that no parameter's
// gradient is identically zero.
func checkFiniteDifferences(t *testing.T, m Model, g []float32, p64 []float64, b data.Batch, ref refLoss, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	const h = 1e-6
	for _, p := range m.Params() {
		gmax := 0.0
		for k := p.Offset; k < p.Offset+p.Size(); k++ {
			gmax = math.Max(gmax, math.Abs(float64(g[k])))
		}
		if gmax == 0 {
			t.Errorf("%s: gradient is identically zero", p.Name)
		}
		for _, j := range []int{0, p.Size() - 1, rng.IntN(p.Size()), rng.IntN(p.Size()), rng.IntN(p.Size())} {
			k := p.Offset + j
			orig := p64[k]
			p64[k] = orig + h
			up := ref(m, p64, b)
			p64[k] = orig - h
			down := ref(m, p64, b)
			p64[k] = orig
			fd := (up - down) / (2 * h)
			if d := math.Abs(float64(g[k]) - fd); d > 1e-3*math.Abs(fd)+1e-5*gmax+1e-7 {
				t.Errorf("%s[%d]: gradient %.6g, finite difference %.6g", p.Name, j, g[k], fd)
			}
		}
	}
}

// marshalONNX exports m at params to ONNX and encodes the model.
func marshalONNX(t *testing.T, m Model, params []float32) (*onnx.Model, []byte) {
	t.Helper()
	om, err := ONNX(m, params)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := om.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return om, enc
}

// specJSON returns m's NetSpec and its JSON, as a model file holds it.
func specJSON(t *testing.T, m Model) (NetSpec, []byte) {
	t.Helper()
	spec, err := Spec(m)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return spec, js
}

// specOps returns the ops of m's layers as its NetSpec names them,
// separated by spaces ("conv relu flatten dense").
func specOps(t *testing.T, m Model) string {
	t.Helper()
	spec, _ := specJSON(t, m)
	ops := make([]string, len(spec.Layers))
	for i, l := range spec.Layers {
		ops[i] = l.Op
	}
	return strings.Join(ops, " ")
}

// fromSpecJSON reads a NetSpec's JSON and rebuilds its network.
func fromSpecJSON(t *testing.T, js []byte) (NetSpec, Model) {
	t.Helper()
	var spec NetSpec
	if err := json.Unmarshal(js, &spec); err != nil {
		t.Fatal(err)
	}
	m, err := NetFromSpec(spec)
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	return spec, m
}

// roundTrips imports enc, the ONNX export of m at params, and rebuilds m
// from its NetSpec JSON: the rebuilt network's spec is m's, and both the
// import and the rebuilt network train as m, bit for bit, on b; the onnx
// checker (where python3-onnx is installed) accepts enc. It returns the
// import and m's spec JSON.
func roundTrips(t *testing.T, name string, m Model, params []float32, enc []byte, b data.Batch) (Model, []byte) {
	t.Helper()
	spec, js := specJSON(t, m)
	im, x0, err := ImportONNX(name, enc, spec.Shape, spec.Classes)
	if err != nil {
		t.Fatal(err)
	}
	_, r := fromSpecJSON(t, js)
	if _, js2 := specJSON(t, r); string(js2) != string(js) {
		t.Errorf("rebuilt spec %s, want %s", js2, js)
	}
	sameTraining(t, "the imported export", m, params, im, x0, b)
	sameTraining(t, "the spec rebuilt", m, params, r, params, b)
	checkWithPython(t, enc, name)
	return im, js
}
