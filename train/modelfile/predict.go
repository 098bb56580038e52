package modelfile

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
)

// ClassProb is one class of a prediction and its probability.
type ClassProb struct {
	Class int     `json:"class"`
	Name  string  `json:"name"`
	Prob  float64 `json:"prob"`
}

// Prediction is a model's most probable classes for one image, most
// probable first, or why the image could not be classified.
type Prediction struct {
	Image string      `json:"image"`
	Top   []ClassProb `json:"top,omitempty"`
	// Inverted says the image had a light background and was inverted
	// for a one-channel (MNIST, Fashion-MNIST, FEMNIST) model (see
	// imageSample).
	Inverted bool `json:"inverted,omitempty"`
	// Error says why the image could not be read; Top is empty then.
	Error string `json:"error,omitempty"`
}

// Predict classifies image files (PNG or JPEG, any size, colour or grey)
// with the image model of a model file (model.gtck of a run of any image
// dataset) and returns, for each image in order, its k most probable classes (all
// of them when k exceeds the class count). Each image is converted and
// resized to the model's input and standardised as the training data was
// (see data.ImageBytes); for a model of a built-in dataset, transparency is
// composed over a background and, for a one-channel (MNIST, Fashion-MNIST,
// FEMNIST) model, an image with a light background is inverted; an image
// folder's model gets its images as the folder's were converted (see
// imageSample). Only PNG and JPEG files are read, and none that would
// decode to more than maxImageBytes (see readImage).
//
// An error about the model file, or k, comes without predictions. An image
// that cannot be read does not stop the others: its prediction holds the
// error, naming the file, and Predict returns all the predictions with an
// error saying how many images failed.
func Predict(modelPath string, images []string, k int) ([]Prediction, error) {
	if k < 1 {
		return nil, fmt.Errorf("top %d classes: want at least 1", k)
	}
	if len(images) == 0 {
		return nil, errors.New("no image files given")
	}
	p, err := openPredictor(modelPath)
	if err != nil {
		return nil, err
	}
	preds := make([]Prediction, len(images))
	d, loaded := p.load(images, preds)
	if len(loaded) > 0 {
		probs, err := p.pool.Probabilities(p.params, d)
		if err != nil {
			return nil, err
		}
		if err := p.checkFinite(probs, images, loaded); err != nil {
			return nil, err
		}
		for j, i := range loaded {
			preds[i].Top = topClasses(probs[j], p.spec.Classes, k)
		}
	}
	if failed := len(images) - len(loaded); failed > 0 {
		first := slices.IndexFunc(preds, func(p Prediction) bool { return p.Error != "" })
		return preds, fmt.Errorf("%d of %d images could not be classified; the first: %s", failed, len(images), preds[first].Error)
	}
	return preds, nil
}

// load reads images into a dataset of the model's samples and fills in
// preds (of the same length) with each image's name, inversion and error.
// It returns the dataset of the images that read and their indices in
// images, in order.
func (p *predictor) load(images []string, preds []Prediction) (*data.Dataset, []int) {
	in := p.input()
	d := &data.Dataset{Name: "images", Shape: slices.Clone(in.Shape), Classes: in.Classes,
		Mean: slices.Clone(in.Mean), Std: slices.Clone(in.Std)}
	dim := d.Dim()
	d.Bytes = make([]uint8, 0, len(images)*dim)
	var loaded []int
	for i, path := range images {
		preds[i].Image = path
		img, err := readImage(path)
		if err != nil {
			preds[i].Error = err.Error()
			continue
		}
		n := len(d.Bytes)
		d.Bytes = d.Bytes[:n+dim]
		preds[i].Inverted = imageSample(img, in.Shape, d.Bytes[n:], p.folder)
		loaded = append(loaded, i)
	}
	d.Labels = make([]uint8, len(loaded))
	return d, loaded
}

// checkFinite requires the class probabilities probs of the images
// loaded (their indices in images) to be finite: a model whose parameters
// are finite but overflow on an image gives NaN, which is no prediction.
func (p *predictor) checkFinite(probs [][]float64, images []string, loaded []int) error {
	for j, row := range probs {
		for c, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: the model's probability of class %d for %s is %v: its parameters are finite but so large that its outputs are not; want a model whose outputs are finite",
					p.path, c, images[loaded[j]], v)
			}
		}
	}
	return nil
}

// predictor is a model file's image classifier, ready to run.
type predictor struct {
	path   string
	model  models.Model
	params []float32
	spec   train.InputSpec
	pool   *models.Pool
	folder bool // trained on an image folder: its images are converted as the folder's were
}

// input returns the data description images are loaded with.
func (p *predictor) input() data.ImageInput {
	return data.ImageInput{Shape: p.spec.Shape, Classes: len(p.spec.Classes), Mean: p.spec.Mean, Std: p.spec.Std}
}

// openPredictor reads a model file and builds its classifier and input
// description: the stored one, or for files written before it was stored,
// the one the run's configuration implies.
func openPredictor(path string) (*predictor, error) {
	ck, m, err := train.ReadModelFile(path)
	if err != nil {
		return nil, err
	}
	cfg := m.Config
	if !slices.Contains(train.Datasets(), cfg.Dataset) || cfg.IsLogReg() {
		return nil, fmt.Errorf("%s holds %s, trained on %s: predict is for image models, not a logistic regression of LibSVM features", path, ck.Model, cfg.DataName())
	}
	// ReadModelFile checked the file against this model, and its input
	// description against the model's input.
	model := m.Model
	var spec train.InputSpec
	if m.Input != nil {
		spec = *m.Input
	} else if spec, err = legacySpec(path, cfg, model); err != nil {
		return nil, err
	}
	pool, err := models.NewPool(model, 1)
	if err != nil {
		return nil, err
	}
	return &predictor{path: path, model: model, params: ck.Params, spec: spec, pool: pool, folder: cfg.Dataset == "images"}, nil
}

// legacySpec returns the input description of a model file written before
// model files stored it: MNIST is plain [0,1] scaling; a CIFAR-10 run that
// standardised its data needs its training set's statistics, read from the
// run's data when it is still there.
func legacySpec(path string, cfg train.Config, model models.Model) (train.InputSpec, error) {
	spec := train.InputSpecOf(cfg, nil, model)
	if cfg.Dataset != "cifar10" || !cfg.Normalize {
		return *spec, nil
	}
	trainSet, _, err := train.LoadData(cfg)
	if err != nil {
		return train.InputSpec{}, fmt.Errorf("%s was written before model files stored the input normalisation, and its run standardised CIFAR-10 with the training set's channel means and deviations; reading them from the run's data failed: %w", path, err)
	}
	spec.Mean, spec.Std = trainSet.Mean, trainSet.Std
	return *spec, nil
}

// topClasses returns the k most probable classes of probabilities p, most
// probable first; equal probabilities keep the lower class first, as the
// argmax of evaluation does.
func topClasses(p []float64, names []string, k int) []ClassProb {
	order := make([]int, len(p))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] > p[order[b]] })
	top := make([]ClassProb, min(k, len(p)))
	for r := range top {
		c := order[r]
		top[r] = ClassProb{Class: c, Name: names[c], Prob: p[c]}
	}
	return top
}
