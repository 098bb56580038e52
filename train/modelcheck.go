package train

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/weights"
)

// fileMeta is what CheckModelFile reads of a model file's run metadata:
// pointers, so that an absent entry is told from an empty one.
// Entries it does not name (the resume state of a checkpoint) are ignored.
type fileMeta struct {
	Config *Config    `json:"config"`
	Input  *InputSpec `json:"input"`
	// Net is the network of an ONNX model (see netSpec).
	Net *models.NetSpec `json:"net"`
	// Placement marks the checkpoint of one rank of a run over several
	// processes, whose parameters are not the run's model (see meta).
	Placement *RankPlacement `json:"placement"`
}

// CheckModelFile is the one validation of a model file (model.gtck, or a
// resume checkpoint) that eval, predict and export share, applied to the
// checkpoint ck read from path. It requires, in order:
//
//   - run metadata, present and well-formed: the JSON object train writes,
//     not a rank's checkpoint (whose parameters average only that rank's
//     nodes), with the run's configuration naming a dataset this build knows, and
//     for an image model an input description (where the file has one)
//     that fits the model;
//   - the parameters of the model that configuration trains: its name, and
//     its tensors' names and shapes in order;
//   - finite parameters;
//   - for an image model, finite logits on a few probe images (black,
//     white, grey and a pattern): parameters that are finite but so large
//     that the network overflows float32 make every output NaN.
//
// It returns what the metadata says of the model. Every error is one line
// naming path and what was expected.
func CheckModelFile(path string, ck *weights.Checkpoint) (ModelMeta, error) {
	if len(ck.Meta) == 0 {
		return ModelMeta{}, fmt.Errorf("%s: no run metadata; want a model file that gtstorm train wrote (model.gtck or checkpoint.gtck), which records its run", path)
	}
	var fm fileMeta
	if err := json.Unmarshal(ck.Meta, &fm); err != nil {
		return ModelMeta{}, fmt.Errorf("%s: run metadata: %v; want the JSON record of the run that gtstorm train writes", path, err)
	}
	if fm.Config == nil {
		return ModelMeta{}, fmt.Errorf("%s: run metadata without the run's configuration (\"config\"); want the JSON record of the run that gtstorm train writes", path)
	}
	if p := fm.Placement; p != nil {
		// A rank averages its own nodes only: its file's parameters are
		// (1/m)·Σ over them, not x̄.
		return ModelMeta{}, fmt.Errorf("%s: the checkpoint of rank %d of %d of a run spread over ranks holds the mean of that rank's nodes only, not the run's model; want the run's %s (written when the run ends; `gtstorm launch --resume --out DIR` finishes an interrupted run)", path, p.Rank, p.Ranks, ModelFile)
	}
	cfg := *fm.Config
	model, err := fm.model(path, cfg, ck)
	if err != nil {
		return ModelMeta{}, err
	}
	if err := checkLayout(path, ck, model, cfg.DataName()); err != nil {
		return ModelMeta{}, err
	}
	if err := ck.CheckFinite(); err != nil {
		return ModelMeta{}, fmt.Errorf("%s: %w", path, err)
	}
	shape, classes, isImage := models.Classifier(model)
	if fm.Input != nil {
		if !isImage {
			return ModelMeta{}, fmt.Errorf("%s: input description: %s takes no images, want none", path, model.Name())
		}
		if err := checkInputSpec(*fm.Input, shape, classes); err != nil {
			return ModelMeta{}, fmt.Errorf("%s: input description: %w", path, err)
		}
	}
	if isImage {
		if err := probeLogits(model, ck.Params, shape, classes, fm.Input); err != nil {
			return ModelMeta{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	return ModelMeta{Config: cfg, Input: fm.Input, Model: model}, nil
}

// metaModel returns the model that the run configuration cfg of the model
// file at path trains, on the samples its input description (nil for none)
// records: an image folder's images need not have the dataset's usual
// shape. A logistic regression has one weight per feature of its data,
// which the file alone does not record: its size is taken from ck, and its
// layout still checked.
func metaModel(path string, cfg Config, ck *weights.Checkpoint, input *InputSpec) (models.Model, error) {
	k, ok := cfg.datasetKind()
	if !ok {
		return nil, fmt.Errorf("%s: run metadata names dataset %q; want one of %v", path, cfg.Dataset, Datasets())
	}
	if k.logReg {
		return models.NewLogReg(len(ck.Params), cfg.Alpha), nil
	}
	if input != nil {
		// The model on the recorded samples, where the file holds it; else
		// the dataset's own, which checkInputSpec then refuses naming both
		// shapes.
		m, err := NewModel(cfg, &data.Dataset{Shape: input.Shape, Classes: len(input.Classes)})
		if err == nil && checkLayout(path, ck, m, cfg.DataName()) == nil {
			return m, nil
		}
	}
	m, err := NewModel(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// checkLayout requires ck to hold m, the model a run on dataset trains: its
// name, parameter count, and its tensors' names and shapes in order.
func checkLayout(path string, ck *weights.Checkpoint, m models.Model, dataset string) error {
	ps := m.Params()
	if ck.Model != m.Name() || len(ck.Params) != m.NumParams() {
		return fmt.Errorf("%s holds %s with %d parameters; %s needs %s with %d",
			path, ck.Model, len(ck.Params), dataset, m.Name(), m.NumParams())
	}
	if len(ck.Tensors) != len(ps) {
		return fmt.Errorf("%s holds %s in %d tensors; %s needs %s in %d",
			path, ck.Model, len(ck.Tensors), dataset, m.Name(), len(ps))
	}
	for i, p := range ps {
		if t := ck.Tensors[i]; t.Name != p.Name || !slices.Equal(t.Shape, p.Shape) {
			return fmt.Errorf("%s holds %s whose tensor %d is %q of shape %v; %s needs %q of shape %v there",
				path, ck.Model, i, t.Name, t.Shape, m.Name(), p.Name, p.Shape)
		}
	}
	return nil
}

// checkInputSpec requires a stored input description to fit an image
// model taking samples of shape with classes classes.
func checkInputSpec(spec InputSpec, shape []int, classes int) error {
	if !slices.Equal(spec.Shape, shape) {
		return fmt.Errorf("samples of shape %v, the model takes %v", spec.Shape, shape)
	}
	if len(spec.Classes) != classes {
		return fmt.Errorf("%d class names, the model has %d classes", len(spec.Classes), classes)
	}
	return data.ImageInput{Shape: spec.Shape, Classes: classes, Mean: spec.Mean, Std: spec.Std}.Check()
}

// probeLogits runs the image model m at params on probe images (black,
// white, mid-grey and a fixed pattern, standardised as in, when it says
// so) and requires every logit to be finite.
func probeLogits(m models.Model, params []float32, shape []int, classes int, in *InputSpec) error {
	names := []string{"black", "white", "grey", "patterned"}
	d := &data.Dataset{Name: "probe images", Shape: slices.Clone(shape), Classes: classes, Labels: make([]uint8, len(names))}
	if in != nil {
		d.Mean, d.Std = in.Mean, in.Std
	}
	dim := d.Dim()
	d.Bytes = make([]uint8, len(names)*dim)
	for j := range dim {
		d.Bytes[dim+j], d.Bytes[2*dim+j], d.Bytes[3*dim+j] = 255, 128, uint8(j*37+j/7)
	}
	index := make([]int, len(names))
	for i := range index {
		index[i] = i
	}
	z, err := models.Logits(m, params, data.Batch{Data: d, Index: index})
	if err != nil {
		return fmt.Errorf("probe of the model: %w", err)
	}
	for i, v := range z {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("logit %d of a %s probe image is %v: the model's parameters are finite but so large that its outputs are not; want a model whose outputs are finite",
				i%classes, names[i/classes], v)
		}
	}
	return nil
}
