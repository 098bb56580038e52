package models

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels"
	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// envGradChild makes the test binary print its gradients' digest and exit
// (see TestGradSameBitsOnEveryKernelSet).
const envGradChild = "GTSTORM_TEST_GRAD_DIGEST"

// gradDigest evaluates the MNIST and CIFAR CNNs, an MLP, the MNIST CNN on
// CIFAR's images, resnet20-gn on small images and the FedAvg CNN on odd
// ones (gradient, loss, and a forward evaluation at other
// parameters) on small batches and digests every bit of the results.
func gradDigest(t testing.TB) string {
	h := sha256.New()
	put := func(v float32) { binary.Write(h, binary.LittleEndian, math.Float32bits(v)) }
	zoo := []Model{NewMNISTCNN(), NewCIFARCNN(), mustNew(t, "mlp:40,24", []int{1, 28, 28}, 10), mustNew(t, "mnist-cnn", []int{3, 32, 32}, 10),
		mustNew(t, "resnet20-gn", []int{3, 16, 16}, 10), mustNew(t, "fedavg-cnn", []int{1, 15, 13}, 10)}
	for i, m := range zoo {
		d := imageSet(uint64(30+i), 12, 10, i%2 == 1, m.(*classifier).shape...)
		w := newWorker(t, m)
		params := m.Init(uint64(7 + i))
		loss, g := grad(t, w, params, batchOf(d, seq(12)...))
		put(loss)
		for _, v := range g {
			put(v)
		}
		for j := range params {
			params[j] -= float32(0.05 * g[j]) // converted: no fused multiply-add on arm64
		}
		sum, correct, err := w.Eval(params, batchOf(d, seq(12)...))
		if err != nil {
			t.Fatal(err)
		}
		binary.Write(h, binary.LittleEndian, math.Float64bits(sum))
		binary.Write(h, binary.LittleEndian, int64(correct))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestGradSameBitsOnEveryKernelSet runs the CNNs' gradients in a child
// process per kernel set (GTSTORM_KERNELS) and checks that every set gives
// the recorded bits, wantGradDigest, which are the same on every
// architecture (.ci/run runs it on arm64 under qemu too).
func TestGradSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestGradSameBitsOnEveryKernelSet", envGradChild, gradDigest)
	if !parent {
		return
	}
	sets := kernels.Available()
	for _, set := range sets {
		if digests[set] != wantGradDigest {
			t.Errorf("kernel set %s on %s: gradients digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, digests[set], wantGradDigest, digests["go"])
		}
	}
}

// wantGradDigest is gradDigest's value on every architecture and kernel
// set: a change that moves it (a model's arithmetic, its initialisation)
// must record the new value here, from the pure-Go set on amd64.
const wantGradDigest = "c8979cf4e25d4dafe90dc2a8195dbd44fb04733beae61e497e7f78a1a52f8096"
