package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBiasReLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	// Rows: FC layer 5×7.
	x := randSlice(rng, 35)
	bias := randSlice(rng, 7)
	for _, relu := range []bool{false, true} {
		y := append([]float32(nil), x...)
		AddBiasRows(y, bias, 5, relu)
		for i, v := range x {
			want := v + bias[i%7]
			if relu {
				want = max(want, 0)
			}
			if y[i] != want {
				t.Fatalf("AddBiasRows relu=%v: y[%d] = %g, want %g", relu, i, y[i], want)
			}
		}
		// Planes: 2 images × 3 channels × 4 elements.
		y = append([]float32(nil), x[:24]...)
		AddBiasPlanes(y, bias[:3], 2, 4, relu)
		for i, v := range x[:24] {
			want := v + bias[(i/4)%3]
			if relu {
				want = max(want, 0)
			}
			if y[i] != want {
				t.Fatalf("AddBiasPlanes relu=%v: y[%d] = %g, want %g", relu, i, y[i], want)
			}
		}
	}
	y := make([]float32, len(x))
	ReLU(y, x)
	dy := randSlice(rng, len(x))
	dx := make([]float32, len(x))
	ReLUBackward(dx, dy, y)
	for i, v := range x {
		if y[i] != max(v, 0) {
			t.Fatalf("ReLU: y[%d] = %g for x = %g", i, y[i], v)
		}
		if want := map[bool]float32{true: dy[i], false: 0}[v > 0]; dx[i] != want {
			t.Fatalf("ReLUBackward: dx[%d] = %g, want %g", i, dx[i], want)
		}
	}
}

func TestBiasGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	dy := randSlice(rng, 2*3*37)
	db := []float32{1, 2, 3}
	BiasGradPlanes(db, dy, 2, 37)
	for c := range 3 {
		want := float64(c + 1)
		for n := range 2 {
			for p := range 37 {
				want += float64(dy[(n*3+c)*37+p])
			}
		}
		if math.Abs(float64(db[c])-want) > 1e-5 {
			t.Errorf("BiasGradPlanes: db[%d] = %g, want %g", c, db[c], want)
		}
	}
	db = make([]float32, 6)
	BiasGradRows(db, dy, 37)
	for j := range 6 {
		var want float64
		for r := range 37 {
			want += float64(dy[r*6+j])
		}
		if math.Abs(float64(db[j])-want) > 1e-5 {
			t.Errorf("BiasGradRows: db[%d] = %g, want %g", j, db[j], want)
		}
	}
}

func TestSoftmaxCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const rows, classes = 6, 10
	logits := randSlice(rng, rows*classes)
	for i := range logits {
		logits[i] *= 20 // large logits exercise the max shift
	}
	logits[3] = 80
	labels := []uint8{3, 0, 9, 5, 5, 1}
	d := make([]float32, rows*classes)
	loss, err := SoftmaxCrossEntropy(d, logits, labels, classes)
	if err != nil {
		t.Fatal(err)
	}
	f := func(l []float32) float64 {
		var s float64
		for r, lab := range labels {
			var z float64
			for j := range classes {
				z += math.Exp(float64(l[r*classes+j]))
			}
			s += math.Log(z) - float64(l[r*classes+int(lab)])
		}
		return s / rows
	}
	if want := f(logits); math.Abs(loss-want) > 1e-9*(1+math.Abs(want)) {
		t.Fatalf("loss = %.12g, want %.12g", loss, want)
	}
	// Gradient against central differences of the float64 definition.
	for i := range logits {
		h := float32(1e-2)
		lp := append([]float32(nil), logits...)
		lm := append([]float32(nil), logits...)
		lp[i] += h
		lm[i] -= h
		num := (f(lp) - f(lm)) / float64(lp[i]-lm[i])
		if math.Abs(float64(d[i])-num) > 1e-4 {
			t.Fatalf("dlogits[%d] = %g, finite difference %g", i, d[i], num)
		}
	}
	if _, err := SoftmaxCrossEntropy(nil, logits, []int{0, 10, 0, 0, 0, 0}, classes); err == nil {
		t.Error("label 10 of 10 classes accepted")
	}
	if _, err := SoftmaxCrossEntropy(nil, logits[:5], labels, classes); err == nil {
		t.Error("short logits accepted")
	}
}

// TestBiasGradWide checks the bias gradients of layers wider than their
// stack accumulators (a 600-unit dense layer, a 100-channel convolution):
// the float64 sums in the documented order, bit for bit, and no
// allocation.
func TestBiasGradWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const rows, cols = 5, 600
	dy := randSlice(rng, rows*cols)
	db := make([]float32, cols)
	BiasGradRows(db, dy, rows)
	for j := range cols {
		var want float64
		for r := range rows {
			want += float64(dy[r*cols+j])
		}
		if db[j] != float32(want) {
			t.Fatalf("BiasGradRows: db[%d] = %g, want %g", j, db[j], float32(want))
		}
	}
	const n, c, plane = 3, 100, 2
	db = make([]float32, c)
	BiasGradPlanes(db, dy, n, plane)
	for ch := range c {
		var want float64
		for i := range n {
			p := dy[(i*c+ch)*plane:]
			want += float64(p[0] + p[1])
		}
		if db[ch] != float32(want) {
			t.Fatalf("BiasGradPlanes: db[%d] = %g, want %g", ch, db[ch], float32(want))
		}
	}
	wide := make([]float32, cols)
	if a := testing.AllocsPerRun(3, func() {
		BiasGradRows(wide, dy, rows)
		BiasGradPlanes(db, dy, n, plane)
	}); a != 0 {
		t.Errorf("%v allocations per run, want 0", a)
	}
}
