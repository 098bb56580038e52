package models

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// envGradChild makes the test binary print its gradients' digest and exit
// (see TestGradSameBitsOnEveryKernelSet).
const envGradChild = "GTSTORM_TEST_GRAD_DIGEST"

// envTestEmulator names a program that runs the child processes of the
// test binary, for a binary cross-compiled and run under qemu's user mode.
const envTestEmulator = "GTSTORM_TEST_EMULATOR"

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
	if os.Getenv(envGradChild) != "" {
		fmt.Printf("digest %s %s\n", kernels.Name(), gradDigest(t))
		return
	}
	sets := kernels.Available()
	digests := map[string]string{}
	for _, set := range sets {
		args := []string{os.Args[0], "-test.run=^TestGradSameBitsOnEveryKernelSet$", "-test.count=1"}
		if emu := os.Getenv(envTestEmulator); emu != "" { // e.g. qemu-aarch64-static
			args = append([]string{emu}, args...)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), envGradChild+"=1", kernels.EnvKernels+"="+set)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", set, err, out)
		}
		var name, digest string
		for _, line := range strings.Split(string(out), "\n") {
			if _, err := fmt.Sscanf(line, "digest %s %s", &name, &digest); err == nil {
				break
			}
		}
		if name != set || digest == "" {
			t.Fatalf("%s: no digest from the child process:\n%s", set, out)
		}
		digests[set] = digest
	}
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
