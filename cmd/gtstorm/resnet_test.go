package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// writeTinyMNIST writes a folder of MNIST IDX files holding ntrain and
// ntest random side×side digits, and returns it: a data set small enough
// for a deep network to run a few rounds in a test.
func writeTinyMNIST(t *testing.T, dir string, side, ntrain, ntest int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	write := func(name string, dims []int, payload []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data.EncodeIDX(dims, payload), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []struct {
		images, labels string
		n              int
	}{{data.MNISTTrainImages, data.MNISTTrainLabels, ntrain}, {data.MNISTTestImages, data.MNISTTestLabels, ntest}} {
		pix, labels := make([]byte, f.n*side*side), make([]byte, f.n)
		for i := range labels {
			labels[i] = byte(rng.IntN(10))
			for k := range side * side {
				// a bright square whose place depends on the label: learnable
				if y, x := k/side, k%side; y/3 == int(labels[i])%(side/3) && x < side/2 {
					pix[i*side*side+k] = 200 + byte(rng.IntN(56))
				} else {
					pix[i*side*side+k] = byte(rng.IntN(40))
				}
			}
		}
		write(f.images, []int{f.n, side, side}, pix)
		write(f.labels, []int{f.n}, labels)
	}
	return dir
}

// resnetFlags is a short resnet20-gn run on a tiny MNIST folder.
func resnetFlags(t *testing.T, dir string) []string {
	return []string{"--dataset", "mnist", "--data-dir", writeTinyMNIST(t, filepath.Join(dir, "mnist"), 12, 96, 24),
		"--model", "resnet20-gn", "--nodes", "3", "--batch", "4", "--iters", "6", "--eval-every", "3",
		"--checkpoint-every", "3", "--local-eval", "12", "--grad-samples", "8", "--eta0", "0.05"}
}

// TestResNetLaunchEqualsTrain: resnet20-gn spread over 3 rank processes
// ends with train's model and metrics, bit for bit.
func TestResNetLaunchEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	launchEqualsTrain(t, dir, resnetFlags(t, dir), 3)
}

// TestResNetPureGoKernelsEqualNative: a resnet20-gn run on the pure-Go
// kernels (GTSTORM_KERNELS=go) ends with the native set's model and
// metrics, bit for bit; and eval, predict and export take its model file.
func TestResNetPureGoKernelsEqualNative(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a deep network twice; run without -short")
	}
	dir := t.TempDir()
	flags := resnetFlags(t, dir)
	native := trainReference(t, dir, flags)
	pure := filepath.Join(dir, "go")
	cmd := gtstorm(t, append([]string{"train", "--out", pure}, flags...)...)
	cmd.Env = append(cmd.Env, "GTSTORM_KERNELS=go")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("train with GTSTORM_KERNELS=go: %v\n%s", err, b)
	}
	sameModel(t, pure, native)
	if got, want := metricsWithoutSeconds(t, pure), metricsWithoutSeconds(t, native); got != want {
		t.Errorf("GTSTORM_KERNELS=go: metrics\n%s\nwant the native set's\n%s", got, want)
	}

	model := filepath.Join(native, "model.gtck")
	for _, args := range [][]string{
		{"eval", "--checkpoint", model, "--data-dir", filepath.Join(dir, "mnist")},
		{"export", "--model", model, "--onnx", filepath.Join(dir, "resnet.onnx")},
	} {
		if b, err := gtstorm(t, args...).CombinedOutput(); err != nil {
			t.Errorf("gtstorm %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "resnet.onnx")); err != nil || st.Size() < 4*270000 {
		t.Errorf("export wrote %v, %v; want the ONNX file of resnet20-gn's 272k parameters", st, err)
	}
}
