package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gtstorm/gtstorm/train"
)

// TestModelONNXDropoutLaunchEqualsTrain trains a network PyTorch exported
// with a Dropout (mlp_dropout.onnx: seeded dropout, its masks drawn from
// each minibatch's key) with GT-STORM, whose two gradients per round share
// the minibatch's masks: one worker and two end with the same model file,
// byte for byte, and so do a run resumed half-way and launch over 2 rank
// processes (with train's metrics). D-GET trains it as well.
func TestModelONNXDropoutLaunchEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	flags := []string{"--model", onnxFixture(t, "mlp_dropout"), "--data-dir", writeTinyMNIST(t, filepath.Join(dir, "mnist"), 28, 64, 16),
		"--algo", "gt-storm", "--nodes", "4", "--batch", "4", "--iters", "6", "--eval-every", "3", "--checkpoint-every", "3",
		"--local-eval", "12", "--grad-samples", "8", "--eta0", "0.05"}
	one := trainReference(t, dir, append(flags, "--workers", "1"))
	two := filepath.Join(dir, "two")
	if b, err := gtstorm(t, append([]string{"train", "--out", two, "--workers", "2"}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("train --workers 2: %v\n%s", err, b)
	}
	sameFile(t, filepath.Join(two, train.ModelFile), filepath.Join(one, train.ModelFile))
	launchEqualsTrain(t, filepath.Join(dir, "ranks"), append(flags, "--workers", "1"), 2)
	sameFile(t, filepath.Join(dir, "ranks", "launch", train.ModelFile), filepath.Join(dir, "ranks", "train", train.ModelFile))

	// A run stopped at round 3 and resumed ends with the same file: the
	// masks depend on the draw, not on the process.
	half := filepath.Join(dir, "half")
	short := append(flags[:len(flags):len(flags)], "--workers", "2", "--iters", "3")
	if b, err := gtstorm(t, append([]string{"train", "--out", half}, short...)...).CombinedOutput(); err != nil {
		t.Fatalf("train --iters 3: %v\n%s", err, b)
	}
	if b, err := gtstorm(t, "resume", "--out", half, "--iters", "6").CombinedOutput(); err != nil {
		t.Fatalf("resume --iters 6: %v\n%s", err, b)
	}
	sameFile(t, filepath.Join(half, train.ModelFile), filepath.Join(one, train.ModelFile))

	// D-GET's large batches are keyed too, piece by piece.
	dget := append(flags[:len(flags):len(flags)], "--algo", "d-get", "--workers", "2")
	if b, err := gtstorm(t, append([]string{"train", "--out", filepath.Join(dir, "dget")}, dget...)...).CombinedOutput(); err != nil {
		t.Fatalf("train --algo d-get: %v\n%s", err, b)
	}
}

// sameFile fails the test unless files a and b hold the same bytes.
func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s (%d bytes) differs from %s (%d bytes)", a, len(x), b, len(y))
	}
}

// TestModelMLPDropoutResume trains mlp:16@0.5 (Dropout after the hidden
// ReLU): config.json and the model file record the name with its rate, and
// a run stopped half-way and resumed ends with the same model file, byte
// for byte, as the run straight through (the masks depend on the draw).
func TestModelMLPDropoutResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains twice; run without -short")
	}
	dir := t.TempDir()
	flags := []string{"--model", "mlp:16@0.50", "--data-dir", writeTinyMNIST(t, filepath.Join(dir, "mnist"), 28, 64, 16),
		"--algo", "gt-storm", "--nodes", "2", "--batch", "4", "--eval-every", "3", "--checkpoint-every", "3",
		"--local-eval", "12", "--grad-samples", "8", "--eta0", "0.05", "--workers", "1"}
	full, half := filepath.Join(dir, "full"), filepath.Join(dir, "half")
	if b, err := gtstorm(t, append([]string{"train", "--out", full, "--iters", "6"}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("train --iters 6: %v\n%s", err, b)
	}
	if b, err := gtstorm(t, append([]string{"train", "--out", half, "--iters", "3"}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("train --iters 3: %v\n%s", err, b)
	}
	if b, err := gtstorm(t, "resume", "--out", half, "--iters", "6").CombinedOutput(); err != nil {
		t.Fatalf("resume --iters 6: %v\n%s", err, b)
	}
	sameFile(t, filepath.Join(half, train.ModelFile), filepath.Join(full, train.ModelFile))
	cfg, err := os.ReadFile(filepath.Join(full, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cfg, []byte(`"mlp:16@0.50"`)) && !bytes.Contains(cfg, []byte(`"mlp:16@0.5"`)) {
		t.Errorf("config.json does not record the model mlp:16@0.5:\n%s", cfg)
	}
}
