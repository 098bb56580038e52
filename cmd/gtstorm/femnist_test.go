package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/train"
)

// leafFile is a LEAF JSON file, keys in data_to_json.py's order.
type leafFile struct {
	Users      []string                  `json:"users"`
	NumSamples []int                     `json:"num_samples"`
	UserData   map[string]leafWriterTest `json:"user_data"`
}

// leafWriterTest is one writer's images and labels.
type leafWriterTest struct {
	X [][]float64 `json:"x"`
	Y []int       `json:"y"`
}

// writeFEMNIST writes DIR/train/*.json (one file a list of sizes in
// train) and DIR/test/t.json, writer w's sample j labelled (w+j)%62.
func writeFEMNIST(t *testing.T, dir string, train [][]int, test []int) string {
	t.Helper()
	w := 0
	file := func(sizes []int) []byte {
		f := leafFile{UserData: map[string]leafWriterTest{}}
		for _, n := range sizes {
			name := fmt.Sprintf("f%04d_%02d", w, w)
			var lw leafWriterTest
			for j := range n {
				x := make([]float64, 784)
				for k := range x {
					x[k] = float64((w+j+k)%256) / 255
				}
				lw.X, lw.Y = append(lw.X, x), append(lw.Y, (w+j)%62)
			}
			f.Users, f.NumSamples, f.UserData[name] = append(f.Users, name), append(f.NumSamples, n), lw
			w++
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i, sizes := range train {
		writeTestFile(t, filepath.Join(dir, "train"), fmt.Sprintf("all_data_%d.json", i), file(sizes))
	}
	writeTestFile(t, filepath.Join(dir, "test"), "t.json", file(test))
	return dir
}

// TestFEMNISTCommands trains on test-written LEAF files with the natural
// partition, shows its writers per node, and refuses what does not apply.
func TestFEMNISTCommands(t *testing.T) {
	root := t.TempDir()
	dir := writeFEMNIST(t, filepath.Join(root, data.FEMNISTDir), [][]int{{5, 1, 3}, {7, 2}}, []int{2, 1})
	out := filepath.Join(root, "run")
	var stdout, stderr bytes.Buffer
	args := []string{"train", "--out", out, "--dataset", "femnist", "--data-dir", dir, "--partition", "natural", "--nodes", "3",
		"--iters", "2", "--batch", "2", "--topology", "ring", "--eval-every", "2", "--checkpoint-every", "2", "--local-eval", "0", "--grad-samples", "4"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("train: exit %d: %s", code, stderr.String())
	}
	_, meta, err := train.ReadModelFile(filepath.Join(out, train.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	if in := meta.Input; in == nil || fmt.Sprint(in.Shape) != "[1 28 28]" || len(in.Classes) != 62 || in.Classes[10] != "A" || in.Classes[61] != "z" {
		t.Fatalf("input description %+v", meta.Input)
	}
	if sum := readSummary(t, out); len(sum.Inputs) != 3 {
		t.Errorf("inputs %v, want the three JSON files", sum.Inputs)
	}
	// Writers of 7, 5, 3, 2, 1 samples, largest first to the lightest
	// node: 7 | 5+1 | 3+2.
	stdout.Reset()
	if code := run([]string{"data", "info", "--dataset", "femnist", "--data-dir", dir, "--partition", "natural", "--nodes", "3"}, &stdout, &stderr); code != 0 {
		t.Fatalf("data info: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"node  samples  writers  samples per class", "    0        7        1  [", "    1        6        2  [", "    2        5        2  ["} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("data info --partition natural lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if code := run([]string{"data", "info", "--data-dir", root}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "femnist  present  "+dir) ||
		!strings.Contains(stdout.String(), "train: 18 samples of 1x28x28, 62 classes") {
		t.Errorf("data info: exit %d:\n%s", code, stdout.String())
	}
	refused := []struct {
		args []string
		want string
	}{
		{[]string{"data", "fetch", "femnist"}, "preprocess.sh"},
		{[]string{"train", "--out", filepath.Join(root, "m"), "--dataset", "mnist", "--partition", "natural"}, "natural only with a dataset whose samples have writers"},
		{[]string{"data", "info", "--dataset", "mnist", "--partition", "natural", "--nodes", "2"}, "has no writers"},
	}
	for _, c := range refused {
		stderr.Reset()
		if code := run(c.args, &stdout, &stderr); code == 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q, want one line with %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestFEMNISTNaturalLaunchEqualsTrain: FEMNIST's writers kept whole by the
// natural partition, the nodes spread over 2 rank processes, end with
// train's model and metrics, bit for bit: every rank partitions the
// writers as one process does.
func TestFEMNISTNaturalLaunchEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	leaf := writeFEMNIST(t, filepath.Join(dir, data.FEMNISTDir), [][]int{{5, 1, 3}, {7, 2, 4}}, []int{2, 1})
	flags := []string{"--dataset", "femnist", "--data-dir", leaf, "--partition", "natural", "--nodes", "3", "--model", "mlp:8",
		"--iters", "4", "--batch", "2", "--topology", "ring", "--eval-every", "2", "--checkpoint-every", "2", "--local-eval", "4", "--grad-samples", "4"}
	launchEqualsTrain(t, dir, flags, 2)
}
