package models

import (
	"math"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// mustNew is New that fails the test on an error.
func mustNew(t testing.TB, name string, shape []int, classes int) Model {
	t.Helper()
	m, err := New(name, shape, classes)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// refMLP is an MLP's batch-mean loss: its dense layers in float64, ReLU
// between them.
func refMLP(m Model, p []float64, b data.Batch) float64 {
	w := tensors(m, p)
	ps := m.Params()
	h, labels := refInputs(b)
	n, in := b.Len(), b.Data.Dim()
	for i := 0; i < len(ps); i += 2 {
		out := ps[i].Shape[1]
		h = refDense(h, n, in, w[i], w[i+1], out)
		if i+2 < len(ps) {
			h = refRelu(h)
		}
		in = out
	}
	return refCrossEntropy(h, labels, in)
}

// refMNISTCNN is the MNIST CNN's batch-mean loss on any image shape it fits.
func refMNISTCNN(m Model, p []float64, b data.Batch) float64 {
	w := tensors(m, p)
	x, labels := refInputs(b)
	n, s, classes := b.Len(), b.Data.Shape, m.(*classifier).classes
	h, oh, ow := refConv(x, n, s[0], s[1], s[2], w[0], w[1], 16, 5, 5)
	h, oh, ow = refPool(refRelu(h), n, 16, oh, ow)
	h, oh, ow = refConv(h, n, 16, oh, ow, w[2], w[3], 32, 5, 5)
	h, oh, ow = refPool(refRelu(h), n, 32, oh, ow)
	return refCrossEntropy(refDense(h, n, 32*oh*ow, w[4], w[5], classes), labels, classes)
}

// resNetParams is the parameter count of a ResNet-GN of n blocks a stage
// on images of c channels with the given classes, counted from SPEC §12:
// the first conv-GN, stage 1's identity blocks, stages 2 and 3 with one
// projection shortcut each, and the classifier.
func resNetParams(n, c, classes int) int {
	convGN := func(in, out, k int) int { return in*out*k*k + 2*out }
	p := convGN(c, 16, 3)
	p += n * 2 * convGN(16, 16, 3)
	p += convGN(16, 32, 3) + convGN(32, 32, 3) + convGN(16, 32, 1) + (n-1)*2*convGN(32, 32, 3)
	p += convGN(32, 64, 3) + convGN(64, 64, 3) + convGN(32, 64, 1) + (n-1)*2*convGN(64, 64, 3)
	return p + 64*classes + classes
}

// zooGradCases are the gradient cases of the networks New builds beyond
// the paper's own: MLPs and a paper CNN on another dataset's images.
func zooGradCases(t testing.TB) []gradCase {
	mnist := imageSet(21, 8, 10, false, 1, 28, 28)
	cifar := imageSet(22, 6, 10, true, 3, 32, 32)
	odd := imageSet(23, 5, 7, false, 2, 19, 17) // odd maps: the pools round down
	small := imageSet(24, 6, 10, true, 3, 8, 8)
	oddSmall := imageSet(25, 4, 7, false, 2, 9, 7) // odd maps: strided convolutions and pools round down
	return []gradCase{
		{"mlp:16/mnist/batch3", mustNew(t, "mlp:16", []int{1, 28, 28}, 10), refMLP, batchOf(mnist, 0, 5, 2), 1},
		{"mlp:12,9/cifar/batch2", mustNew(t, "mlp:12,9", []int{3, 32, 32}, 10), refMLP, batchOf(cifar, 1, 4), 1},
		{"mlp:5,4,3/odd/batch1", mustNew(t, "mlp:5,4,3", []int{2, 19, 17}, 7), refMLP, batchOf(odd, 3), 1},
		{"mnist-cnn/cifar/batch2", mustNew(t, "mnist-cnn", []int{3, 32, 32}, 10), refMNISTCNN, batchOf(cifar, 0, 5), 1},
		{"mnist-cnn/odd/batch2", mustNew(t, "mnist-cnn", []int{2, 19, 17}, 7), refMNISTCNN, batchOf(odd, 1, 2), 1},
		{"resnet8-gn/small/batch3", mustNew(t, "resnet8-gn", []int{3, 8, 8}, 10), refResNetGN, batchOf(small, 0, 1, 2), 1},
		{"resnet8-gn/odd/batch2", mustNew(t, "resnet8-gn", []int{2, 9, 7}, 7), refResNetGN, batchOf(oddSmall, 1, 3), 1},
		{"resnet14-gn/small/batch1", mustNew(t, "resnet14-gn", []int{3, 8, 8}, 10), refResNetGN, batchOf(small, 4), 1},
		{"fedavg-cnn/small/batch2", mustNew(t, "fedavg-cnn", []int{3, 8, 8}, 10), refFedAvgCNN, batchOf(small, 2, 5), 1},
		{"fedavg-cnn/odd/batch2", mustNew(t, "fedavg-cnn", []int{2, 9, 7}, 7), refFedAvgCNN, batchOf(oddSmall, 0, 2), 1},
	}
}

// TestZooGradMatchesFiniteDifferences checks the MLPs' and the adapted
// CNN's gradients against float64 central differences of the reference
// losses, as TestGradMatchesFiniteDifferences does for the paper's models.
func TestZooGradMatchesFiniteDifferences(t *testing.T) {
	for _, c := range zooGradCases(t) {
		t.Run(c.name, func(t *testing.T) { checkGradCase(t, c) })
	}
}

// TestNewShapes checks the layouts New gives: the paper's models on their
// own data, an adapted CNN and MLPs.
func TestNewShapes(t *testing.T) {
	for _, c := range []struct {
		name    string
		shape   []int
		classes int
		params  int
	}{
		{"mnist-cnn", []int{1, 28, 28}, 10, 18378},
		{"cifar-cnn", []int{3, 32, 32}, 10, 62006},
		{"mnist-cnn", []int{3, 32, 32}, 10, 16*3*25 + 16 + 32*16*25 + 32 + 32*5*5*10 + 10},
		{"cifar-cnn", []int{1, 28, 28}, 10, 6*25 + 6 + 16*6*25 + 16 + 16*4*4*120 + 120 + 120*84 + 84 + 84*10 + 10},
		{"mlp:64", []int{1, 28, 28}, 10, 784*64 + 64 + 64*10 + 10},
		{"mlp:64,32", []int{3, 32, 32}, 10, 3072*64 + 64 + 64*32 + 32 + 32*10 + 10},
		{"resnet20-gn", []int{3, 32, 32}, 10, 272474}, // SPEC §12
		{"resnet20-gn", []int{1, 28, 28}, 10, 272474 - 2*16*9},
		{"resnet32-gn", []int{3, 32, 32}, 10, resNetParams(5, 3, 10)},
		{"resnet56-gn", []int{3, 32, 32}, 100, resNetParams(9, 3, 100)},
		{"resnet8-gn", []int{2, 9, 7}, 3, resNetParams(1, 2, 3)},
		{"fedavg-cnn", []int{1, 28, 28}, 62, 32*25 + 32 + 64*32*25 + 64 + 64*7*7*512 + 512 + 512*62 + 62},
		{"fedavg-cnn", []int{3, 32, 32}, 10, 32*3*25 + 32 + 64*32*25 + 64 + 64*8*8*512 + 512 + 512*10 + 10},
		// patch embedding, class token, 17 positions, 2 blocks (2 LayerNorms, qkv, proj, fc1, fc2), LayerNorm, head
		{"vit:4,16,2,2,2", []int{3, 16, 16}, 10, 3*16*16 + 16 + 16 + 17*16 + 2*(2*32+16*48+48+16*16+16+16*32+32+32*16+16) + 32 + 16*10 + 10},
		{"vit:7,8,1,2,4", []int{1, 28, 28}, 3, 49*8 + 8 + 8 + 17*8 + (2*16 + 8*24 + 24 + 8*8 + 8 + 8*32 + 32 + 32*8 + 8) + 16 + 8*3 + 3},
		// tokenizer conv 3×3 1→8 (no bias), 14×14 positions, a layer (pre_norm, qkv without bias, proj, norm1, linear1, linear2), norm, attention_pool, fc
		{"cct:1,2,1,8/3x1", []int{1, 28, 28}, 3, 9*8 + 196*8 + (16 + 8*24 + 8*8 + 8 + 16 + 8*8 + 8 + 8*8 + 8) + 16 + 8 + 1 + 8*3 + 3},
		{"cct:2,2,1,16/3x2", []int{3, 16, 16}, 10, 14715}, // SHI-Labs' module of that shape (cct_shi.onnx)
	} {
		m := mustNew(t, c.name, c.shape, c.classes)
		if m.NumParams() != c.params || m.Name() != c.name {
			t.Errorf("New(%s, %v): %s with %d parameters, want %d", c.name, c.shape, m.Name(), m.NumParams(), c.params)
		}
	}
	// The paper's models are New on their data, tensor for tensor.
	for _, m := range []Model{NewMNISTCNN(), NewCIFARCNN()} {
		n := mustNew(t, m.Name(), m.(*classifier).shape, 10)
		if a, b := m.Params(), n.Params(); len(a) != len(b) || m.NumParams() != n.NumParams() {
			t.Errorf("%s: New gives %v, want %v", m.Name(), b, a)
		}
	}
	if got := mustNew(t, "mlp:007,8", []int{4}, 2).Name(); got != "mlp:7,8" {
		t.Errorf("mlp:007,8 is named %q, want mlp:7,8", got)
	}
}

// TestNewRefuses checks that every name New cannot build is refused with
// an error saying why.
func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape []int
		want  string
	}{
		{"", []int{1, 28, 28}, "unknown model"},
		{"lenet", []int{1, 28, 28}, "unknown model"},
		{"mlp:", []int{1, 28, 28}, "at least one layer width"},
		{"mlp", []int{1, 28, 28}, "unknown model"},
		{"mlp:0", []int{1, 28, 28}, "width \"0\""},
		{"mlp:-3", []int{1, 28, 28}, "width \"-3\""},
		{"mlp:64,", []int{1, 28, 28}, "width \"\""},
		{"mlp:6x4", []int{1, 28, 28}, "width \"6x4\""},
		{"mlp:99999999999999999999", []int{1, 28, 28}, "a whole number from 1"},
		{"mlp:16777217", []int{1, 28, 28}, "a whole number from 1"},
		{"logreg", []int{1, 28, 28}, "LibSVM"},
		{"resnet21-gn", []int{3, 32, 32}, "6n + 2"},
		{"resnet2-gn", []int{3, 32, 32}, "6n + 2"},
		{"resnet-gn", []int{3, 32, 32}, "6n + 2"},
		{"resnetx-gn", []int{3, 32, 32}, "6n + 2"},
		{"resnet20", []int{3, 32, 32}, "unknown model"},
		{"resnet20-gn", []int{3072}, "images [C,H,W]"},
		{"fedavg-cnn", []int{1, 3, 28}, "at least 4×4"},
		{"net.onnx", []int{1, 28, 28}, "net.onnx: no such file"},
		{"testdata/onnx/gn_resnet.onnx", []int{3, 32, 32}, "want [N,3,32,32]"},
		{"mnist-cnn", []int{1, 15, 28}, "at least 16×16"},
		{"cifar-cnn", []int{123}, "at least 16×16"},
		{"mlp:8", []int{}, "at least one feature"},
	} {
		m, err := New(c.name, c.shape, 10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %v) = %v, %v; want an error containing %q", c.name, c.shape, m, err, c.want)
		}
	}
}

// TestMLPTrains checks that a few steps of an MLP lower its loss.
func TestMLPTrains(t *testing.T) {
	d := imageSet(31, 64, 10, false, 1, 28, 28)
	m := mustNew(t, "mlp:32", []int{1, 28, 28}, 10)
	w := newWorker(t, m)
	b := batchOf(d, seq(64)...)
	first, _ := grad(t, w, m.Init(1), b)
	params := trainSome(t, m, 1, d, 20, 64, 0.1)
	last, _ := grad(t, w, params, b)
	if !(last < first) || math.IsNaN(float64(last)) {
		t.Errorf("loss %g after 20 steps, %g before", last, first)
	}
}

// TestONNXMLPMatchesOnnxGo compares the logits of an MLP's export (Flatten,
// Gemm and Relu) and of the MNIST CNN adapted to CIFAR's images with
// gtstorm's, and runs onnx's checker on both where python3-onnx is there.
func TestONNXMLPMatchesOnnxGo(t *testing.T) {
	skipShort(t)
	for _, c := range []struct {
		name  string
		shape []int
	}{{"mlp:48,24", []int{1, 28, 28}}, {"mnist-cnn", []int{3, 32, 32}}} {
		m := mustNew(t, c.name, c.shape, 10)
		d := imageSet(41, 128, 10, false, c.shape...)
		params := trainSome(t, m, 3, d, 10, 32, 0.05)
		for i := range params {
			params[i] *= 2 // logits of a few units, as TestONNXCIFARMatchesOnnxGo
		}
		enc := compareONNX(t, m, params, batchOf(imageSet(42, 50, 10, false, c.shape...), seq(50)...))
		checkWithPython(t, enc, m.Name())
	}
}
