package train

import (
	"fmt"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
)

// datasetKind is one entry of the table of datasets a run can train on:
// its name (data.LoadWith loads it), the model it trains and its headline
// measure.
type datasetKind struct {
	name string
	// logReg marks the LibSVM datasets: the non-convex logistic regression,
	// whose headline is the stationarity S(x) rather than test accuracy.
	logReg bool
	// model returns the model trained on train (nil when only the model's
	// shape is wanted and the dataset fixes it).
	model func(c Config, train *data.Dataset) (models.Model, error)
}

// datasetKinds returns the dataset table.
func datasetKinds() []datasetKind {
	logReg := func(c Config, train *data.Dataset) (models.Model, error) {
		if train.Classes != 2 {
			return nil, fmt.Errorf("%s: logistic regression needs 2 classes, the data has %d", train.Name, train.Classes)
		}
		return models.NewLogReg(train.Dim(), c.Alpha), nil
	}
	return []datasetKind{
		{"mnist", false, func(Config, *data.Dataset) (models.Model, error) { return models.NewMNISTCNN(), nil }},
		{"cifar10", false, func(Config, *data.Dataset) (models.Model, error) { return models.NewCIFARCNN(), nil }},
		{"libsvm", true, logReg},
		{"a9a", true, logReg},
		{"ijcnn1", true, logReg},
		{"rcv1", true, logReg},
	}
}

// datasetKindOf returns the table entry of the dataset named name.
func datasetKindOf(name string) (datasetKind, bool) {
	for _, k := range datasetKinds() {
		if k.name == name {
			return k, true
		}
	}
	return datasetKind{}, false
}

// Datasets returns the dataset names a Config accepts.
func Datasets() []string {
	var names []string
	for _, k := range datasetKinds() {
		names = append(names, k.name)
	}
	return names
}

// IsLogReg reports whether the run trains the logistic regression (a LibSVM
// dataset), whose headline measure is the stationarity S(x) rather than
// test accuracy.
func (c Config) IsLogReg() bool {
	k, _ := datasetKindOf(c.Dataset)
	return k.logReg
}

// newModel returns the model a dataset is trained with: the paper's CNNs for
// the images, the non-convex logistic regression for LibSVM data.
func newModel(cfg Config, train *data.Dataset) (models.Model, error) {
	k, ok := datasetKindOf(cfg.Dataset)
	if !ok {
		return nil, &ConfigError{"dataset", cfg.Dataset, fmt.Sprint(Datasets())}
	}
	return k.model(cfg, train)
}
