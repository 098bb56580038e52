package models

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels"
	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// TestDropoutMatchesReference checks dropNet (Dropout, padded pools, a
// dense layer without bias) against its float64 reference with the same
// masks: Grad's loss, central differences of every parameter tensor, and
// Eval's loss with Dropout the identity.
func TestDropoutMatchesReference(t *testing.T) {
	const p1, p2, draw = 0.4, 0.5, 0x5eed
	m, err := dropNet(p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(imageSet(3, 5, 4, true, 1, 6, 6), 0, 3, 1)
	b.Draw = draw
	params := m.Init(4)
	w := newWorker(t, m)
	loss, g := grad(t, w, params, b)
	ref := refDropNet(p1, p2, draw)
	p64 := to64(params)
	if want := ref(m, p64, b); math.Abs(float64(loss)-want) > 1e-5*math.Max(1, want) {
		t.Errorf("Grad loss %.7g, reference %.7g", loss, want)
	}
	sum, _, err := w.Eval(params, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sum/3, refDropNet(p1, p2, 0)(m, p64, b); math.Abs(got-want) > 1e-5*math.Max(1, want) {
		t.Errorf("Eval loss %.7g, reference without dropout %.7g", got, want)
	}
	checkFiniteDifferences(t, m, g, p64, b, ref, 5)
}

// TestDropoutDraws checks that the masks are the minibatch draw's: the
// same key gives the same gradient bit for bit on another worker and in
// GradPair (whose two gradients at one point agree), another key another
// gradient, and a batch without a key is refused naming the model.
func TestDropoutDraws(t *testing.T) {
	m, err := dropNet(0.4, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if !Stochastic(m) || Stochastic(NewMNISTCNN()) {
		t.Fatalf("Stochastic: %v for dropnet, %v for the MNIST CNN", Stochastic(m), Stochastic(NewMNISTCNN()))
	}
	if off, err := dropNet(0, 0); err != nil || Stochastic(off) {
		t.Fatalf("dropNet(0, 0): %v, Stochastic %v", err, off != nil && Stochastic(off))
	}
	b := batchOf(imageSet(3, 8, 4, true, 1, 6, 6), 0, 3, 1, 7)
	params := m.Init(4)
	b.Draw = 11
	_, g1 := grad(t, newWorker(t, m), params, b)
	w := newWorker(t, m)
	_, g2 := grad(t, w, params, b)
	gNew, gOld := make([]float32, len(params)), make([]float32, len(params))
	if _, _, err := w.(PairWorker).GradPair(params, params, b, gNew, gOld); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g1, g2) || !slices.Equal(g1, gNew) || !slices.Equal(gNew, gOld) {
		t.Error("the same draw key gives different gradients (workers, or GradPair's two)")
	}
	b.Draw = 12
	if _, g3 := grad(t, w, params, b); slices.Equal(g1, g3) {
		t.Error("draw keys 11 and 12 give the same gradient")
	}
	b.Draw = 0
	if _, err := w.Grad(params, b, gNew); err == nil || !strings.Contains(err.Error(), "dropnet: has dropout") {
		t.Errorf("Grad on a batch without a draw key: %v", err)
	}
	if _, _, err := w.(PairWorker).GradPair(params, params, b, gNew, gOld); err == nil {
		t.Error("GradPair on a batch without a draw key: no error")
	}
	if _, _, err := w.Eval(params, b); err != nil {
		t.Errorf("Eval on a batch without a draw key: %v", err)
	}
}

// TestDropMaskRate checks the masks' values and their rate: 0 or
// 1/(1−p), about a fraction p of zeros, and distinct layers and keys
// drawing distinct masks.
func TestDropMaskRate(t *testing.T) {
	const n = 1 << 16
	for _, p := range []float32{0, 0.1, 0.5, 0.9} {
		a, b, c := make([]float32, n), make([]float32, n), make([]float32, n)
		fillDropMask(a, 1, 2, p)
		fillDropMask(b, 1, 3, p)
		fillDropMask(c, 2, 2, p)
		zeros := 0
		for _, v := range a {
			switch v {
			case 0:
				zeros++
			case float32(1) / float32(1-float64(p)):
			default:
				t.Fatalf("p %g: mask value %g", p, v)
			}
		}
		if f := float64(zeros) / n; math.Abs(f-float64(p)) > 0.01 {
			t.Errorf("p %g: %.4f of the elements dropped", p, f)
		}
		if p > 0 && (slices.Equal(a, b) || slices.Equal(a, c)) {
			t.Errorf("p %g: another layer or key draws the same mask", p)
		}
	}
}

// TestDropNetSpecAndONNX stores dropNet as a NetSpec (JSON) and rebuilds
// it, the rate, the pools' padding and the missing bias kept; exports it
// to ONNX and imports the export again: the same spec and, with Dropout
// the identity, the same logits; and where onnx's checker and onnxruntime
// run, the checker's approval and onnxruntime's logits.
func TestDropNetSpecAndONNX(t *testing.T) {
	m, err := dropNet(0.25, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	spec, js := specJSON(t, m)
	for _, want := range []string{`{"op":"dropout","in":[2],"rate":0.25}`, `"op":"maxpool","in":[3],"kernel":3,"stride":2,"pad":1`, `"units":4,"nobias":true`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s lacks %s", js, want)
		}
	}
	_, r := fromSpecJSON(t, js)
	if again, _ := Spec(r); !slices.EqualFunc(again.Layers, spec.Layers, sameLayer) {
		t.Errorf("rebuilt spec %+v, want %+v", again, spec)
	}
	params := m.Init(9)
	_, enc := marshalONNX(t, m, params)
	im, x0, err := ImportONNX("dropnet", enc, []int{1, 6, 6}, 4)
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(imageSet(3, 5, 4, true, 1, 6, 6), seq(5)...)
	z1, err1 := Logits(m, params, b)
	z2, err2 := Logits(im, x0, b)
	if err1 != nil || err2 != nil || !slices.Equal(z1, z2) || !slices.Equal(x0, params) {
		t.Errorf("the export imported again gives other logits (%v, %v)", err1, err2)
	}
	is, _ := Spec(im) // the Flatten the export writes before a Dense left out
	is.Layers = slices.DeleteFunc(is.Layers, func(l LayerSpec) bool { return l.Op == "flatten" })
	if !slices.EqualFunc(is.Layers, spec.Layers, func(a, b LayerSpec) bool {
		return a.Op == b.Op && a.Rate == b.Rate && a.Pad == b.Pad && a.NoBias == b.NoBias
	}) {
		t.Errorf("imported export's spec %+v, want %+v", is.Layers, spec.Layers)
	}
	checkWithPython(t, enc, "dropnet")
	if testing.Short() {
		return
	}
	node, modules := onnxRuntime(t)
	checkRuntime(t, "dropnet's export", node, modules, enc, m, params, b)
}

func sameLayer(a, b LayerSpec) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// envDropChild makes the test binary print dropDigest and exit (see
// TestDropoutSameBitsOnEveryKernelSet).
const envDropChild = "GTSTORM_TEST_DROP_DIGEST"

// dropDigest digests dropNet's loss and gradient on two keyed batches and
// its evaluation.
func dropDigest(t testing.TB) string {
	h := sha256.New()
	put := func(v float32) { binary.Write(h, binary.LittleEndian, math.Float32bits(v)) }
	m, err := dropNet(0.4, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	d := imageSet(31, 12, 4, true, 1, 6, 6)
	w, params := newWorker(t, m), m.Init(8)
	for draw := uint64(1); draw <= 2; draw++ {
		b := batchOf(d, seq(12)...)
		b.Draw = draw * 0x9e37
		loss, g := grad(t, w, params, b)
		put(loss)
		for _, v := range g {
			put(v)
		}
	}
	sum, _, err := w.Eval(params, batchOf(d, seq(12)...))
	if err != nil {
		t.Fatal(err)
	}
	binary.Write(h, binary.LittleEndian, math.Float64bits(sum))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestDropoutSameBitsOnEveryKernelSet runs dropNet in a child process per
// kernel set and checks that every set, on every architecture, gives the
// recorded bits.
func TestDropoutSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestDropoutSameBitsOnEveryKernelSet", envDropChild, dropDigest)
	if !parent {
		return
	}
	for _, set := range kernels.Available() {
		if digests[set] != wantDropDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, digests[set], wantDropDigest, digests["go"])
		}
	}
}

// wantDropDigest is dropDigest's value on every architecture and kernel
// set, recorded from the pure-Go set on amd64.
const wantDropDigest = "799a2d99ea96af823cb83ee9f8b6405cc62f0d0c4c8e05effce6874387bb1adc"
