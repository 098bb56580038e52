package train

import (
	"fmt"
	"strings"

	"github.com/gtstorm/gtstorm/models"
)

// DescribeModel returns the model that --model names for --dataset (with
// --data-dir where the dataset's sample shape depends on it, as for a
// folder of images), without loading the data: a zoo name or an ONNX file
// (FILE.onnx) as NewModel builds it for training, or a model file
// (model.gtck or checkpoint.gtck of a run) as it was trained, dataset
// then ignored. The logistic regression of the LibSVM datasets, sized by
// the data, is refused. trainable is --trainable of an ONNX file.
func DescribeModel(model, dataset, dataDir, trainable string) (models.Model, error) {
	if strings.HasSuffix(strings.ToLower(model), ".gtck") {
		_, meta, err := ReadModelFile(model)
		if err != nil {
			return nil, err
		}
		return meta.Model, nil
	}
	cfg := Config{Dataset: dataset, Model: model, DataDir: dataDir, Trainable: trainable}
	if want := wantTrainable(cfg); want != "" {
		return nil, &ConfigError{"trainable", trainable, want}
	}
	k, ok := cfg.datasetKind()
	switch {
	case !ok:
		return nil, &ConfigError{"dataset", dataset, strings.Join(Datasets(), "|")}
	case k.logReg:
		return nil, &ConfigError{"dataset", dataset, fmt.Sprintf("an image dataset (%s): the logistic regression of LibSVM data has one weight per feature of the data, and no layers", strings.Join(cfg.imageDatasets(), "|"))}
	}
	return NewModel(cfg, nil)
}
