package modelfile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// quickMNIST is a short MNIST run that reaches about 88% test accuracy in
// a few seconds: DSGD on 2 fully connected nodes for 300 rounds.
func quickMNIST() train.Config {
	cfg := train.Default()
	cfg.Algo, cfg.Nodes, cfg.Topology, cfg.Partition = "dsgd", 2, "complete", "iid"
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 300, 300, 0
	cfg.Eta0, cfg.LocalEvalSamples, cfg.GradSamples = 0.05, 100, 10
	return cfg
}

// sampleImage returns sample i of a 1-channel byte dataset as a grey image.
func sampleImage(d *data.Dataset, i int) *image.Gray {
	h, w := d.Shape[1], d.Shape[2]
	g := image.NewGray(image.Rect(0, 0, w, h))
	copy(g.Pix, d.Bytes[i*h*w:(i+1)*h*w])
	return g
}

// colourCopy returns g enlarged to w×h by nearest neighbour as a yellow
// digit on a dark blue background.
func colourCopy(g *image.Gray, w, h int) *image.RGBA {
	b := g.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := g.GrayAt(x*b.Dx()/w, y*b.Dy()/h).Y
			out.SetRGBA(x, y, color.RGBA{v, v, max(v/2, 40), 255})
		}
	}
	return out
}

// writeImage encodes img as PNG, or as JPEG of quality 90 when name ends
// in .jpg, into dir and returns its path.
func writeImage(t *testing.T, dir, name string, img image.Image) string {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if strings.HasSuffix(name, ".jpg") {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeModelFile writes a model file of params for cfg's model, with the
// given input description (nil: a file of the releases before it).
func writeModelFile(t *testing.T, path string, cfg train.Config, model models.Model, params []float32, in *train.InputSpec) {
	t.Helper()
	m, err := json.Marshal(meta{Config: cfg, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	ck := modelCheckpoint(model, params)
	ck.Meta = m
	if err := weights.Write(path, ck); err != nil {
		t.Fatal(err)
	}
}

// meta is the run metadata of a model file, as train writes it.
type meta struct {
	Config train.Config     `json:"config"`
	Input  *train.InputSpec `json:"input,omitempty"`
}

// modelCheckpoint returns a checkpoint of params with m's layout, as train
// writes model.gtck.
func modelCheckpoint(m models.Model, params []float32) *weights.Checkpoint {
	ck := &weights.Checkpoint{Model: m.Name(), Params: params}
	for _, p := range m.Params() {
		ck.Tensors = append(ck.Tensors, weights.Tensor{Name: p.Name, Shape: p.Shape})
	}
	return ck
}

// TestPredictTrainedMNIST trains a small MNIST model, writes test images
// as PNGs (native 28×28 grey, enlarged colour) and JPEGs, and requires
// predict's classes and probabilities on the native PNGs to be exactly
// what the evaluation path computes for the same test samples, and the
// converted copies to mostly agree.
func TestPredictTrainedMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model for a few seconds")
	}
	out := t.TempDir()
	sum, err := train.Train(context.Background(), quickMNIST(), train.Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	modelPath := filepath.Join(out, train.ModelFile)

	// The model file describes its input.
	ck, err := weights.Read(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	var mm meta
	if err := json.Unmarshal(ck.Meta, &mm); err != nil {
		t.Fatal(err)
	}
	if mm.Input == nil || !slices.Equal(mm.Input.Shape, []int{1, 28, 28}) || mm.Input.Mean != nil ||
		!slices.Equal(mm.Input.Classes, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) {
		t.Fatalf("model file's input description: %+v", mm.Input)
	}
	if mm.Config.Dataset != "mnist" || mm.Config.Iters != 300 {
		t.Errorf("model file's config: %+v", mm.Config)
	}

	_, test, err := data.LoadMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	test = test.Head(n)
	dir := t.TempDir()
	var native, colour, jpg, inverted []string
	for i := range n {
		g := sampleImage(test, i)
		native = append(native, writeImage(t, dir, fmt.Sprintf("%03d.png", i), g))
		colour = append(colour, writeImage(t, dir, fmt.Sprintf("%03d-colour.png", i), colourCopy(g, 50, 60)))
		jpg = append(jpg, writeImage(t, dir, fmt.Sprintf("%03d.jpg", i), colourCopy(g, 56, 56)))
		inverted = append(inverted, writeImage(t, dir, fmt.Sprintf("%03d-inverted.png", i), invertedCopy(g)))
	}
	preds, err := Predict(modelPath, native, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != n {
		t.Fatalf("%d predictions for %d images", len(preds), n)
	}

	// The evaluation path on the test samples themselves.
	model := models.NewMNISTCNN()
	pool, err := models.NewPool(model, 1)
	if err != nil {
		t.Fatal(err)
	}
	logits := make([]float32, n*10)
	if err := pool.Logits(ck.Params, test, logits); err != nil {
		t.Fatal(err)
	}
	predicted := &data.Dataset{Name: "predicted", Shape: test.Shape, Classes: 10, Bytes: test.Bytes, Labels: make([]uint8, n)}
	correct, lossSum := 0, 0.0
	for i, p := range preds {
		if p.Image != native[i] || len(p.Top) != 3 {
			t.Fatalf("prediction %d: %+v", i, p)
		}
		z := logits[i*10 : (i+1)*10]
		for r, c := range p.Top {
			if r > 0 && c.Prob > p.Top[r-1].Prob {
				t.Fatalf("image %d: classes not in decreasing probability: %+v", i, p.Top)
			}
			var s float64
			for _, v := range z {
				s += math.Exp(float64(v) - float64(z[c.Class]))
			}
			if math.Abs(c.Prob-1/s) > 1e-6 || c.Name != fmt.Sprint(c.Class) {
				t.Fatalf("image %d: %+v, softmax of the test sample's logits %v", i, c, 1/s)
			}
		}
		predicted.Labels[i] = uint8(p.Top[0].Class)
		if p.Top[0].Class == int(test.Labels[i]) {
			correct++
		}
		lossSum -= math.Log(p.Top[0].Prob)
	}
	// Evaluate counts every predicted class as correct, with the loss of
	// their probabilities, and the true labels as often as predict hits them.
	acc, loss, err := pool.Evaluate(ck.Params, predicted, train.EvalChunk)
	if err != nil {
		t.Fatal(err)
	}
	if acc != 1 || math.Abs(loss-lossSum/n) > 1e-6 {
		t.Errorf("Evaluate with predict's classes as labels: accuracy %v (want 1), loss %v (want %v)", acc, loss, lossSum/n)
	}
	acc, _, err = pool.Evaluate(ck.Params, test, train.EvalChunk)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(correct) / n; acc != want {
		t.Errorf("Evaluate's accuracy %v on the first %d test samples, predict's %v", acc, n, want)
	}
	if acc < 0.8 {
		t.Errorf("accuracy %v on the first %d test samples, want at least 0.8 from the quick run", acc, n)
	}
	t.Logf("run's test accuracy %v; predict's on %d PNGs %v", sum.FinalTestAcc, n, acc)

	// Dark digits on white, as handwriting on paper, are inverted back to
	// the test samples: the same classes and probabilities, every one.
	for _, c := range []struct {
		name     string
		files    []string
		agree    int
		inverted bool // and so exactly the native PNGs' samples
	}{{"50×60 colour PNG", colour, n * 9 / 10, false}, {"56×56 colour JPEG", jpg, n * 9 / 10, false}, {"inverted PNG", inverted, n, true}} {
		other, err := Predict(modelPath, c.files, 1)
		if err != nil {
			t.Fatal(err)
		}
		same := 0
		for i := range other {
			if c.inverted && other[i].Top[0] == preds[i].Top[0] || !c.inverted && other[i].Top[0].Class == preds[i].Top[0].Class {
				same++
			}
			if other[i].Inverted != c.inverted {
				t.Errorf("%s: image %d inverted %v, want %v", c.name, i, other[i].Inverted, c.inverted)
			}
		}
		t.Logf("%s: %d of %d agree with the native PNGs", c.name, same, n)
		if same < c.agree {
			t.Errorf("%s: %d of %d top classes agree with the native PNGs', want %d", c.name, same, n, c.agree)
		}
	}
}

// invertedCopy returns g as a dark digit on a white background.
func invertedCopy(g *image.Gray) *image.Gray {
	out := image.NewGray(g.Bounds())
	for i, v := range g.Pix {
		out.Pix[i] = 255 - v
	}
	return out
}

// TestPredictImageFolderModel: a one-channel model trained on an image
// folder gets a dark-on-white image as the folder's images were converted,
// not inverted as an MNIST model's is; the same weights trained on MNIST
// invert it.
func TestPredictImageFolderModel(t *testing.T) {
	dir := t.TempDir()
	img := strokeImage(color.Gray{255}, color.Gray{0})
	imgs := []string{writeImage(t, dir, "ink.png", img)}
	model := models.NewMNISTCNN()
	params := model.Init(5)
	classes := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	probsOf := func(sample []uint8) []float64 {
		t.Helper()
		pool, _ := models.NewPool(model, 1)
		d := &data.Dataset{Name: "by hand", Shape: []int{1, 28, 28}, Classes: 10, Labels: make([]uint8, 1), Bytes: sample}
		probs, err := pool.Probabilities(params, d)
		if err != nil {
			t.Fatal(err)
		}
		return probs[0]
	}
	plain := make([]uint8, 28*28)
	data.ImageBytes(img, 1, 28, 28, plain)
	inverted := make([]uint8, len(plain))
	for i, v := range plain {
		inverted[i] = 255 - v
	}
	for _, c := range []struct {
		dataset  string
		inverted bool
		sample   []uint8
	}{
		{"images", false, plain},
		{"mnist", true, inverted},
	} {
		cfg := train.Default()
		cfg.Dataset, cfg.DataDir, cfg.Model = c.dataset, "", "mnist-cnn"
		if c.dataset == "images" {
			cfg.DataDir = filepath.Join(dir, "folder")
		}
		path := filepath.Join(dir, c.dataset+".gtck")
		writeModelFile(t, path, cfg, model, params, &train.InputSpec{Shape: []int{1, 28, 28}, Classes: classes})
		got, err := Predict(path, imgs, 10)
		if err != nil {
			t.Fatalf("%s: %v", c.dataset, err)
		}
		if got[0].Inverted != c.inverted {
			t.Errorf("%s: inverted %v, want %v", c.dataset, got[0].Inverted, c.inverted)
		}
		want := probsOf(c.sample)
		for _, cp := range got[0].Top {
			if cp.Prob != want[cp.Class] {
				t.Errorf("%s: class %d probability %v, want %v (the model on the %s sample)", c.dataset, cp.Class, cp.Prob, want[cp.Class], map[bool]string{true: "inverted", false: "plain"}[c.inverted])
				break
			}
		}
	}
}

// TestPredictModelFiles predicts with model files written directly: files
// without an input description (earlier releases), CIFAR-10 with stored
// standardisation, LibSVM models and bad descriptions.
func TestPredictModelFiles(t *testing.T) {
	dir := t.TempDir()
	g := image.NewGray(image.Rect(0, 0, 28, 28))
	for i := range g.Pix {
		g.Pix[i] = uint8(i * 7)
	}
	imgs := []string{
		writeImage(t, dir, "grey.png", g),
		writeImage(t, dir, "colour.png", colourCopy(g, 40, 40)),
	}

	mnist := models.NewMNISTCNN()
	params := mnist.Init(3)
	cfg := train.Default()
	legacy, current := filepath.Join(dir, "legacy.gtck"), filepath.Join(dir, "current.gtck")
	writeModelFile(t, legacy, cfg, mnist, params, nil)
	writeModelFile(t, current, cfg, mnist, params, train.InputSpecOf(cfg, nil, mnist))
	a, err := Predict(legacy, imgs, 20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Predict(current, imgs, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(a[0].Top) != 10 {
		t.Errorf("--top 20 of 10 classes gives %d", len(a[0].Top))
	}
	for i := range a {
		if !slices.Equal(a[i].Top, b[i].Top) {
			t.Errorf("image %d: %v from the file without input description, %v with", i, a[i].Top, b[i].Top)
		}
	}

	// CIFAR-10 with stored standardisation: what the model sees is the
	// image standardised with the stored statistics.
	cifar := models.NewCIFARCNN()
	cparams := cifar.Init(4)
	ccfg := train.Default()
	ccfg.Dataset, ccfg.DataDir = "cifar10", filepath.Join(dir, "no-cifar-here")
	trainSet := &data.Dataset{Mean: []float32{0.49, 0.48, 0.45}, Std: []float32{0.25, 0.24, 0.26}}
	spec := train.InputSpecOf(ccfg, trainSet, cifar)
	if !slices.Equal(spec.Shape, []int{3, 32, 32}) || !slices.Equal(spec.Mean, trainSet.Mean) || !slices.Equal(spec.Std, trainSet.Std) || spec.Classes[3] != "cat" {
		t.Fatalf("CIFAR-10 input description %+v", spec)
	}
	cpath := filepath.Join(dir, "cifar.gtck")
	writeModelFile(t, cpath, ccfg, cifar, cparams, spec)
	got, err := Predict(cpath, imgs, 10)
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := models.NewPool(cifar, 1)
	for _, stats := range []bool{true, false} {
		d := &data.Dataset{Name: "by hand", Shape: []int{3, 32, 32}, Classes: 10, Labels: make([]uint8, len(imgs)), Bytes: make([]uint8, len(imgs)*3*32*32)}
		if stats {
			d.Mean, d.Std = trainSet.Mean, trainSet.Std
		}
		for i, p := range imgs {
			img, err := data.ReadImage(p)
			if err != nil {
				t.Fatal(err)
			}
			data.ImageBytes(img, 3, 32, 32, d.Bytes[i*3072:(i+1)*3072])
		}
		probs, err := pool.Probabilities(cparams, d)
		if err != nil {
			t.Fatal(err)
		}
		for i := range imgs {
			match := true
			for _, c := range got[i].Top {
				match = match && c.Prob == probs[i][c.Class] && c.Name == spec.Classes[c.Class]
			}
			if match != stats {
				t.Errorf("image %d: predict %v; probabilities with stored statistics=%v: %v", i, got[i].Top, stats, probs[i])
			}
		}
	}

	// A CIFAR-10 file without input description: plain scaling needs
	// nothing, standardisation needs the run's training data.
	ccfg.Normalize = false
	writeModelFile(t, cpath, ccfg, cifar, cparams, nil)
	if _, err := Predict(cpath, imgs, 3); err != nil {
		t.Errorf("CIFAR-10 model without standardisation: %v", err)
	}
	ccfg.Normalize = true
	writeModelFile(t, cpath, ccfg, cifar, cparams, nil)
	if _, err := Predict(cpath, imgs, 3); err == nil || !strings.Contains(err.Error(), "written before model files stored the input normalisation") ||
		!strings.Contains(err.Error(), cpath) {
		t.Errorf("CIFAR-10 model without stored standardisation: %v", err)
	}

	// Refusals.
	lr := models.NewLogReg(5, models.DefaultAlpha)
	lcfg := train.Default()
	lcfg.Dataset, lcfg.DataDir = "libsvm", "/data/a9a"
	lpath := filepath.Join(dir, "logreg.gtck")
	writeModelFile(t, lpath, lcfg, lr, lr.Init(1), nil)
	bad := filepath.Join(dir, "bad.gtck")
	badSpec := train.InputSpecOf(cfg, nil, mnist)
	badSpec.Shape = []int{1, 32, 32}
	writeModelFile(t, bad, cfg, mnist, params, badSpec)
	badStats := filepath.Join(dir, "badstats.gtck")
	writeModelFile(t, badStats, cfg, mnist, params, &train.InputSpec{Shape: []int{1, 28, 28}, Mean: []float32{0.1}, Std: []float32{0}, Classes: train.InputSpecOf(cfg, nil, mnist).Classes})
	svhn := filepath.Join(dir, "svhn.gtck")
	scfg := train.Default()
	scfg.Dataset = "svhn"
	writeModelFile(t, svhn, scfg, mnist, params, nil)
	mismatch := filepath.Join(dir, "mismatch.gtck")
	writeModelFile(t, mismatch, ccfg, mnist, params, nil)
	for _, c := range []struct {
		path   string
		images []string
		k      int
		want   string
	}{
		{lpath, imgs, 3, "holds logreg, trained on a9a: predict is for image models"},
		{svhn, imgs, 3, `run metadata names dataset "svhn"; want one of`},
		{bad, imgs, 3, "samples of shape [1 32 32], the model takes [1 28 28]"},
		{badStats, imgs, 3, "channel 0"},
		{mismatch, imgs, 3, "holds mnist-cnn with 18378 parameters; cifar10 needs cifar-cnn"},
		{current, imgs, 0, "top 0 classes"},
		{filepath.Join(dir, "missing.gtck"), imgs, 3, "missing.gtck"},
		{current, []string{imgs[0], filepath.Join(dir, "missing.png")}, 3, "missing.png"},
		{current, []string{lpath}, 3, lpath + ": not a PNG or JPEG image"},
	} {
		_, err := Predict(c.path, c.images, c.k)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Predict(%s, %v, %d): %v, want an error with %q", c.path, c.images, c.k, err, c.want)
		}
	}
}
