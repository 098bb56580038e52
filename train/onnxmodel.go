package train

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/weights"
)

// A run of --model FILE.onnx trains a network that PyTorch (or another
// framework) wrote: the file is one of the run's inputs, fingerprinted like
// its data, so that resume and ranks import the same network; x⁰ is its
// initialisers unless --init seed asks for fresh weights. Model files and
// checkpoints store the imported network's description (models.NetSpec) in
// their run metadata, so that eval, predict and export rebuild it without
// the .onnx file.

// The values of --init.
const (
	InitFile = "file" // x⁰ from the ONNX file's initialisers (the default of an ONNX model)
	InitSeed = "seed" // x⁰ drawn from --seed, as for every model of the zoo
)

// initSettings returns the settings of the model's initialisation.
func initSettings() []Setting {
	return []Setting{
		{Name: "init", Usage: "x⁰ of a --model FILE.onnx: file (its initialisers, the default) or seed (fresh weights drawn from --seed, as the built-in models' are)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Init) },
			want: func(c Config) string {
				switch {
				case c.Init != "" && c.Init != InitFile && c.Init != InitSeed:
					return InitFile + " or " + InitSeed
				case c.Init == InitFile && !models.IsONNXName(c.ModelName()):
					return fmt.Sprintf("%s (the default) with --model %s: only a network file (--model FILE.onnx) has weights of its own", InitSeed, c.ModelName())
				}
				return ""
			}},
		{Name: "trainable", Usage: "initialisers of a --model FILE.onnx that torch trains although the file cannot say so (a layer scale [C] folded to onnx::Mul_86): comma-separated names or path.Match patterns; one value multiplying or added to the data trains as a scale or shift (ReZero's alpha, Fixup's biases), one a channel of an image as a layer scale; a pattern that matches none is refused with the file's names", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Trainable) },
			want:  wantTrainable},
	}
}

// wantTrainable returns what --trainable accepts when c's value is not
// allowed, else "".
func wantTrainable(c Config) string {
	switch {
	case c.Trainable == "":
	case !models.IsONNXName(c.ModelName()):
		return fmt.Sprintf("none with --model %s: only a network file (--model FILE.onnx) has initialisers", c.ModelName())
	default:
		if err := models.CheckTrainable(c.trainable()); err != nil {
			return trainableWant + " (" + err.Error() + ")"
		}
	}
	return ""
}

// trainableWant is what --trainable takes.
const trainableWant = "comma-separated initialiser names or path.Match patterns"

// trainable returns the patterns of --trainable.
func (c Config) trainable() []string {
	if c.Trainable == "" {
		return nil
	}
	return strings.Split(c.Trainable, ",")
}

// resolveModel makes an ONNX model's path absolute and writes --init as
// config.json records it: only where it is not the model's default (seed
// for an ONNX file), so that a run without the flag has the same settings.
func (c Config) resolveModel() (Config, error) {
	if !models.IsONNXName(c.Model) {
		if c.Init == InitSeed {
			c.Init = ""
		}
		return c, nil
	}
	abs, err := filepath.Abs(c.Model)
	if err != nil {
		return c, &ConfigError{"model", c.Model, fmt.Sprintf("a path that can be made absolute (%v)", err)}
	}
	c.Model = abs
	if c.Init == InitFile {
		c.Init = ""
	}
	return c, nil
}

// importONNX imports the network file cfg.Model for samples of shape with
// classes classes; a file the import refuses is a ConfigError of --model,
// one line naming the file and why.
func importONNX(cfg Config, shape []int, classes int) (models.Model, []float32, error) {
	m, x0, err := models.ImportONNXFileWith(cfg.Model, shape, classes, models.ImportOptions{Trainable: cfg.trainable()})
	if err != nil {
		return nil, nil, &ConfigError{"model", cfg.Model, fmt.Sprintf("a network gtstorm can import for --dataset %s (samples %v, %d classes): %v", cfg.Dataset, shape, classes, err)}
	}
	return m, x0, nil
}

// initialParams returns x⁰ of a run of cfg training m: the initialisers of
// an ONNX model's file, which m keeps from its import, unless --init seed;
// else m.Init(seed).
func initialParams(cfg Config, m models.Model) ([]float32, error) {
	if !models.IsONNXName(cfg.ModelName()) || cfg.Init == InitSeed {
		return m.Init(cfg.Seed), nil
	}
	x0, ok := models.FileParams(m)
	if !ok {
		return nil, fmt.Errorf("%s: the model was not imported from the file", cfg.Model)
	}
	return x0, nil
}

// netSpec returns the description a model file stores of an ONNX model,
// nil for the other models (their configuration rebuilds them).
func netSpec(cfg Config, m models.Model) *models.NetSpec {
	if !models.IsONNXName(cfg.ModelName()) {
		return nil
	}
	s, err := models.Spec(m)
	if err != nil {
		return nil
	}
	return &s
}

// model returns the model the model file at path holds (see metaModel): an
// ONNX model is rebuilt from the description the file stores, which must
// fit the samples of its input description or, without one, its dataset's.
func (fm fileMeta) model(path string, cfg Config, ck *weights.Checkpoint) (models.Model, error) {
	if !models.IsONNXName(cfg.ModelName()) {
		return metaModel(path, cfg, ck, fm.Input)
	}
	k, ok := cfg.datasetKind()
	if !ok {
		return nil, fmt.Errorf("%s: run metadata names dataset %q; want one of %v", path, cfg.Dataset, Datasets())
	}
	spec := fm.Net
	if spec == nil {
		return nil, fmt.Errorf("%s: run metadata of a --model %s run without the network's description (\"net\"); want a model file that gtstorm train wrote", path, cfg.Model)
	}
	shape, classes := k.shape, k.classes
	if fm.Input != nil {
		shape, classes = fm.Input.Shape, spec.Classes // the classes are checked against the input's names later
	}
	if !slices.Equal(spec.Shape, shape) || spec.Classes != classes {
		return nil, fmt.Errorf("%s: the stored network takes samples %v with %d classes, its run's data %v with %d", path, spec.Shape, spec.Classes, shape, classes)
	}
	m, err := models.NetFromSpec(*spec)
	if err != nil {
		return nil, fmt.Errorf("%s: stored network: %w", path, err)
	}
	return m, nil
}
