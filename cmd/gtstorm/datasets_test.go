package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/train"
)

// writeTestFile writes b to dir/name, making dir, and returns the path.
func writeTestFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeFashion writes Fashion-MNIST's four IDX files, plain, into dir:
// ntrain and ntest 28×28 images, image i labelled i%10 with pixel k equal
// to byte(i*7+k).
func writeFashion(t *testing.T, dir string, ntrain, ntest int) string {
	t.Helper()
	for _, set := range []struct {
		images, labels string
		n              int
	}{{data.MNISTTrainImages, data.MNISTTrainLabels, ntrain}, {data.MNISTTestImages, data.MNISTTestLabels, ntest}} {
		pix, lab := make([]byte, set.n*784), make([]byte, set.n)
		for i := range set.n {
			lab[i] = byte(i % 10)
			for k := range 784 {
				pix[i*784+k] = byte(i*7 + k)
			}
		}
		writeTestFile(t, dir, set.images, data.EncodeIDX([]int{set.n, 28, 28}, pix))
		writeTestFile(t, dir, set.labels, data.EncodeIDX([]int{set.n}, lab))
	}
	return dir
}

// cifar100Bin returns n CIFAR-100 binary records: record i has coarse
// label i%20 and fine label (3i)%100.
func cifar100Bin(n int) []byte {
	var b []byte
	for i := range n {
		b = append(b, byte(i%20), byte(3*i%100))
		for k := range 3072 {
			b = append(b, byte(i*17+k*5))
		}
	}
	return b
}

// writeCIFAR100 writes DIR/cifar-100-binary with ntrain and ntest records
// and the label-names files, and returns DIR.
func writeCIFAR100(t *testing.T, dir string, ntrain, ntest int) string {
	t.Helper()
	folder := filepath.Join(dir, data.CIFAR100Dir)
	writeTestFile(t, folder, "train.bin", cifar100Bin(ntrain))
	writeTestFile(t, folder, "test.bin", cifar100Bin(ntest))
	var fine, coarse strings.Builder
	for i := range 100 {
		fmt.Fprintf(&fine, "fine_%d\n", i)
	}
	for i := range 20 {
		fmt.Fprintf(&coarse, "coarse_%d\n", i)
	}
	writeTestFile(t, folder, "fine_label_names.txt", []byte(fine.String()))
	writeTestFile(t, folder, "coarse_label_names.txt", []byte(coarse.String()))
	return dir
}

// tinyRun is a few rounds on 2 nodes.
var tinyRun = []string{"--nodes", "2", "--topology", "ring", "--batch", "2", "--iters", "4", "--eval-every", "2",
	"--checkpoint-every", "2", "--local-eval", "0", "--grad-samples", "4", "--partition", "iid"}

// TestTrainNewDatasets trains a few rounds on test-written Fashion-MNIST
// and CIFAR-100 files and checks the model file's classes and names.
func TestTrainNewDatasets(t *testing.T) {
	root := t.TempDir()
	fashion := writeFashion(t, filepath.Join(root, "fashion"), 12, 4)
	cifar := writeCIFAR100(t, filepath.Join(root, "data"), 12, 4)
	cases := []struct {
		name        string
		args        []string
		shape       string
		first, last string
		classes     int
	}{
		{"fashion-mnist", []string{"--dataset", "fashion-mnist", "--data-dir", fashion}, "[1 28 28]", "T-shirt/top", "Ankle boot", 10},
		{"cifar100", []string{"--dataset", "cifar100", "--data-dir", cifar}, "[3 32 32]", "fine_0", "fine_99", 100},
		{"cifar100 coarse", []string{"--dataset", "cifar100", "--data-dir", cifar, "--coarse-labels"}, "[3 32 32]", "coarse_0", "coarse_19", 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"train", "--out", out}, c.args...), tinyRun...)
			if code := run(args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			_, meta, err := train.ReadModelFile(filepath.Join(out, train.ModelFile))
			if err != nil {
				t.Fatal(err)
			}
			in := meta.Input
			if in == nil || fmt.Sprint(in.Shape) != c.shape || len(in.Classes) != c.classes || in.Classes[0] != c.first || in.Classes[c.classes-1] != c.last {
				t.Fatalf("input description %+v", in)
			}
			if sum := readSummary(t, out); len(sum.Inputs) < 2 {
				t.Fatalf("inputs %v", sum.Inputs)
			}
		})
	}
}

// TestDataInfoNewDatasets lists Fashion-MNIST and CIFAR-100 in a data
// folder, and a file partition's histograms.
func TestDataInfoNewDatasets(t *testing.T) {
	dir := writeCIFAR100(t, t.TempDir(), 6, 2)
	writeFashion(t, filepath.Join(dir, data.FashionDir), 5, 3)
	var out, errb bytes.Buffer
	if code := run([]string{"data", "info", "--data-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"fashion-mnist present  " + filepath.Join(dir, data.FashionDir),
		"train: 5 samples of 1x28x28, 10 classes [1 1 1 1 1 0 0 0 0 0]",
		"cifar100 present  " + filepath.Join(dir, data.CIFAR100Dir),
		"train: 6 samples of 3x32x32, 100 classes [1 0 0 1 0 0 1 ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("data info lacks %q:\n%s", want, out.String())
		}
	}
	part := writeTestFile(t, dir, "nodes.txt", []byte("1\n0\n1\n0\n1\n1\n"))
	out.Reset()
	args := []string{"data", "info", "--dataset", "cifar100", "--coarse-labels", "--data-dir", dir, "--partition", "file:" + part, "--nodes", "2"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// Samples 1 and 3 (coarse labels 1, 3) on node 0; 0, 2, 4, 5 on node 1.
	for _, want := range []string{
		"partition file:" + part + " of cifar100-coarse-train (6 samples) over 2 nodes",
		"    0        2  [0 1 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"    1        4  [1 0 1 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("data info --partition lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPartitionFileIsAnInput: a run with --partition file:PATH records the
// file, and resuming it after the file changed is refused naming it.
func TestPartitionFileIsAnInput(t *testing.T) {
	root := t.TempDir()
	fashion := writeFashion(t, filepath.Join(root, "fashion"), 10, 4)
	part := writeTestFile(t, root, "nodes.txt", []byte("0\n1\n0\n1\n0\n1\n0\n1\n0\n1\n"))
	out := filepath.Join(root, "run")
	args := append([]string{"train", "--out", out, "--dataset", "fashion-mnist", "--data-dir", fashion}, tinyRun...)
	args = append(args, "--partition", "file:"+part)
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	writeTestFile(t, root, "nodes.txt", []byte("1\n1\n0\n1\n0\n1\n0\n1\n0\n1\n"))
	stderr.Reset()
	code := run([]string{"resume", "--out", out, "--iters", "6"}, &stdout, &stderr)
	if msg := stderr.String(); code == 0 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, part) || !strings.Contains(msg, "changed") {
		t.Fatalf("resume after the partition file changed: exit %d, %q", code, msg)
	}
}

// TestNewDatasetsBadInput refuses bad data and partition files in one line.
func TestNewDatasetsBadInput(t *testing.T) {
	root := t.TempDir()
	fashion := writeFashion(t, filepath.Join(root, "fashion"), 6, 2)
	badCIFAR := filepath.Join(root, "bad-cifar")
	writeTestFile(t, badCIFAR, "train.bin", cifar100Bin(3)[:3*3074-1])
	writeTestFile(t, badCIFAR, "test.bin", cifar100Bin(1))
	lines := func(s string) string {
		return writeTestFile(t, root, fmt.Sprint(len(s), "-", strings.Count(s, "1")), []byte(s))
	}
	base := []string{"train", "--dataset", "fashion-mnist", "--data-dir", fashion, "--nodes", "2", "--iters", "2", "--out", filepath.Join(root, "never")}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"CIFAR-100 of a cut record", []string{"train", "--dataset", "cifar100", "--data-dir", badCIFAR, "--out", filepath.Join(root, "x")}, "not a whole number of 3074-byte CIFAR-100 records"},
		{"--coarse-labels on mnist", []string{"train", "--dataset", "mnist", "--coarse-labels"}, "--coarse-labels"},
		{"Fashion-MNIST not fetched", []string{"train", "--dataset", "fashion-mnist", "--data-dir", filepath.Join(root, "none"), "--out", filepath.Join(root, "y")}, "run: gtstorm data fetch fashion-mnist --data-dir " + filepath.Join(root, "none")},
		{"partition file too short", append(base, "--partition", "file:"+lines("0\n1\n0\n")), "3 lines, want one per training sample (6)"},
		{"partition file node ≥ m", append(base, "--partition", "file:"+lines("0\n1\n0\n1\n0\n2\n")), "line 6: node 2, but there are 2 nodes"},
		{"partition file leaves a node empty", append(base, "--partition", "file:"+lines("0\n0\n0\n0\n0\n0\n")), "node 1 would get no samples"},
		{"partition file a folder", append(base, "--partition", "file:"+root), "a directory, want a regular file"},
		{"partition file without a path", append(base, "--partition", "file:"), "--partition"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(c.args, &stdout, &stderr)
			if msg := stderr.String(); code == 0 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, c.want) {
				t.Fatalf("exit %d, stderr %q; want one line with %q", code, msg, c.want)
			}
		})
	}
}
