package modelfile

import (
	"fmt"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// EvalResult is the test accuracy and loss of a saved model.
type EvalResult struct {
	Model   string
	Params  int
	Dataset string // the evaluated set's name
	Samples int
	Acc     float64
	Loss    float64
	// OnTrain says that the data hold no test set, so Acc and Loss are
	// the training set's.
	OnTrain bool
}

// Eval evaluates the averaged model of a checkpoint on a dataset's test set
// (its training set when it has none). dataset and dir default to the run's
// own, read from the checkpoint, which must pass train.CheckModelFile. A
// loss that is not finite is an error naming the file.
func Eval(path, dataset, dir string) (*EvalResult, error) {
	ck, m, err := train.ReadModelFile(path)
	if err != nil {
		return nil, err
	}
	cfg := m.Config
	if dataset != "" && dataset != cfg.Dataset {
		cfg.Dataset, cfg.DataDir = dataset, ""
	}
	if dir != "" {
		cfg.DataDir = dir
	}
	fixed := false // the feature count comes from the model
	if n, ok := logRegFeatures(ck, cfg.Dataset); ok {
		// The data must have the model's feature count, not the largest
		// index the evaluated files happen to hold.
		cfg.Features, fixed = n, true
	}
	trainSet, test, err := train.LoadData(cfg)
	if err != nil {
		if fixed {
			return nil, fmt.Errorf("%s holds %s over %d features: %w", path, ck.Model, cfg.Features, err)
		}
		return nil, err
	}
	onTrain := test == nil
	if onTrain {
		test = trainSet
	}
	model := m.Model // an ONNX model's network is the one the file stores
	if !models.IsONNXName(cfg.ModelName()) {
		if model, err = train.NewModel(cfg, trainSet); err != nil {
			return nil, err
		}
	} else if spec, err := models.Spec(model); err == nil && !slices.Equal(spec.Shape, test.Shape) {
		// The stored network reads one shape: say so, not that a batch
		// has another feature count.
		return nil, &train.ConfigError{Flag: "dataset", Value: cfg.Dataset,
			Want: fmt.Sprintf("data of samples %v, which the network in %s reads; %s's samples are %v", spec.Shape, path, test.Name, test.Shape)}
	}
	if err := checkModelFile(path, ck, cfg, model); err != nil {
		return nil, err
	}
	pool, err := models.NewPool(model, 1)
	if err != nil {
		return nil, err
	}
	acc, loss, err := pool.Evaluate(ck.Params, test, train.EvalChunk)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(acc) {
		return nil, fmt.Errorf("%s: the model's test loss on %s is %v: its parameters are finite but so large that its outputs are not; want a model whose outputs are finite",
			path, test.Name, loss)
	}
	return &EvalResult{Model: ck.Model, Params: len(ck.Params), Dataset: test.Name, Samples: test.Len(), Acc: acc, Loss: loss, OnTrain: onTrain}, nil
}

// logRegFeatures returns the feature count of a checkpoint's logistic
// regression and true, when ck holds one and dataset is LibSVM data. models.NewLogReg has one weight per feature and no
// bias, so the count is the number of parameters.
func logRegFeatures(ck *weights.Checkpoint, dataset string) (int, bool) {
	if ck.Model != models.NewLogReg(1, models.DefaultAlpha).Name() || !(train.Config{Dataset: dataset}).IsLogReg() {
		return 0, false
	}
	return len(ck.Params), len(ck.Params) > 0
}

// checkModelFile requires the model in ck to be the one cfg builds.
func checkModelFile(path string, ck *weights.Checkpoint, cfg train.Config, model models.Model) error {
	if model.Name() != ck.Model || model.NumParams() != len(ck.Params) {
		return fmt.Errorf("%s holds %s with %d parameters; %s needs %s with %d",
			path, ck.Model, len(ck.Params), cfg.Dataset, model.Name(), model.NumParams())
	}
	return nil
}
