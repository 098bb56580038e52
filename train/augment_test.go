package train

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
)

// writeTinyMNIST writes MNIST IDX files of ntrain and ntest random
// side×side digits into a new folder and returns it.
func writeTinyMNIST(t *testing.T, side, ntrain, ntest int) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
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
				pix[i*side*side+k] = byte(rng.IntN(256))
			}
		}
		write(f.images, []int{f.n, side, side}, pix)
		write(f.labels, []int{f.n}, labels)
	}
	return dir
}

// augmentConfig is a short run of algo with --augment crop:4,flip: an MLP
// on 12×12 MNIST-format digits.
func augmentConfig(t *testing.T, algo string) Config {
	c := Default()
	c.DataDir, c.Model, c.Algo, c.Augment = writeTinyMNIST(t, 12, 120, 30), "mlp:16", algo, "crop:4,flip"
	c.Nodes, c.Partition, c.Batch, c.Eta0 = 3, "iid", 4, 0.05
	c.Iters, c.EvalEvery, c.CheckpointEvery = 60, 10, 20
	c.LocalEvalSamples, c.GradSamples = 30, 10
	if algo == decentral.DGET {
		c = c.WithKnob("big-batch", 12)
	}
	return c
}

// TestAugmentSameBitsAnyWorkers: runs with --augment crop:4,flip give the
// same metrics and summary with 1 and 2 workers, GT-STORM's and D-GET's
// (whose large batches are augmented too), and differ from the runs
// without augmentation.
func TestAugmentSameBitsAnyWorkers(t *testing.T) {
	for _, algo := range []string{decentral.GTSTORM, decentral.DGET} {
		t.Run(algo, func(t *testing.T) {
			if algo != decentral.GTSTORM {
				skipVariantUnderRace(t, decentral.GTSTORM)
			}
			cfg := augmentConfig(t, algo)
			var rows [][]string
			for _, c := range []struct {
				workers int
				augment string
			}{{1, cfg.Augment}, {2, cfg.Augment}, {2, "none"}} {
				cfg.Workers, cfg.Augment = c.workers, c.augment
				out := t.TempDir()
				if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
					t.Fatal(err)
				}
				_, r, err := readRun(out)
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, withoutSeconds(r))
			}
			if !slices.Equal(rows[0], rows[1]) {
				t.Errorf("metrics differ between 1 and 2 workers:\n%v\n%v", rows[0], rows[1])
			}
			if rows[1][len(rows[1])-1] == rows[2][len(rows[2])-1] {
				t.Errorf("the last metrics row is the same with and without augmentation: %s", rows[1][len(rows[1])-1])
			}
		})
	}
}

// TestAugmentResumeEqualsUninterrupted: an augmented run interrupted and
// resumed ends as the uninterrupted run: the draw keys come from the node
// streams, which the checkpoint holds.
func TestAugmentResumeEqualsUninterrupted(t *testing.T) {
	for _, algo := range []string{decentral.GTSTORM, decentral.DGET} {
		t.Run(algo, func(t *testing.T) {
			if algo != decentral.GTSTORM {
				skipVariantUnderRace(t, decentral.GTSTORM)
			}
			resumeEqualsUninterrupted(t, augmentConfig(t, algo))
		})
	}
}

// TestAugmentRefused: --augment values that do not parse, or do not fit
// the data, are refused in one line naming the flag and the value.
func TestAugmentRefused(t *testing.T) {
	mnist := augmentConfig(t, decentral.GTSTORM)
	lr := lrConfig(decentral.GTSTORM)
	for _, c := range []struct {
		cfg     Config
		augment string
		want    string
	}{
		{mnist, "crop:-1", "crop:P (P from 1 to 255"},
		{mnist, "crop:2.5", "crop:P"},
		{mnist, "rotate", "none, or crop:P"},
		{mnist, "crop:28", "a crop padding smaller than mnist's 28×28 images"},
		{lr, "flip", "none with --dataset libsvm: augmentation applies to images, and a8a holds feature vectors"},
		{lr, "crop:4", "a8a holds feature vectors"},
	} {
		c.cfg.Augment = c.augment
		err := c.cfg.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Flag != "augment" || !strings.Contains(err.Error(), c.want) ||
			!strings.HasPrefix(err.Error(), "--augment "+c.augment+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("--augment %s on %s: %v; want one line naming --augment %s and %q", c.augment, c.cfg.Dataset, err, c.augment, c.want)
		}
	}
	for _, ok := range []string{"", "none", "crop:11", "flip", "crop:2+flip"} {
		mnist.Augment = ok
		if err := mnist.Validate(); err != nil {
			t.Errorf("--augment %q: %v", ok, err)
		}
	}
	// The loaded data decides where the settings could not tell: this
	// folder's digits are 12×12, where MNIST's are 28×28.
	mnist.Augment = "crop:12"
	if _, err := Train(context.Background(), mnist, Options{Out: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "--augment crop:12: want a crop padding smaller than mnist's 12×12 images") {
		t.Errorf("crop:12 on 12×12 digits: %v", err)
	}
	if _, err := trainAugment(Config{Augment: "crop:3", Dataset: "x"}, &data.Dataset{Shape: []int{3, 3, 8}}); err == nil ||
		err.Error() != "--augment crop:3: want a crop padding smaller than x's 3×8 images" {
		t.Errorf("crop:3 on 3×8 images: %v", err)
	}
	if _, err := trainAugment(Config{Augment: "flip", Dataset: "y"}, &data.Dataset{Shape: []int{7}}); err == nil ||
		err.Error() != "--augment flip: want none on y, whose samples of shape [7] are not images [C H W]" {
		t.Errorf("flip on vectors: %v", err)
	}
	if a, err := trainAugment(Config{Augment: "crop:4,flip"}, &data.Dataset{Shape: []int{3, 32, 32}}); err != nil ||
		!reflect.DeepEqual(a, &data.Augment{Pad: 4, Flip: true}) {
		t.Errorf("crop:4,flip on 32×32 images: %v, %v", a, err)
	}
}

// TestAugmentSweepable: a grid may vary --augment, crop:P+flip being one
// value where commas separate values.
func TestAugmentSweepable(t *testing.T) {
	if !slices.Contains(Sweepable(), "augment") {
		t.Fatalf("augment is not among the sweepable settings %v", Sweepable())
	}
	c := augmentConfig(t, decentral.GTSTORM)
	for _, v := range []string{"none", "crop:4", "flip", "crop:4+flip"} {
		if err := c.Set("augment", v); err != nil || c.Augment != v {
			t.Errorf("Set(augment, %s): %v, Augment %q", v, err, c.Augment)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("augment=%s: %v", v, err)
		}
	}
}
