package train

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/models"
)

// Config is every setting of one run. Its JSON form is config.json, enough
// to repeat the run; its field names follow the command-line flags.
type Config struct {
	Dataset      string  `json:"dataset"`                 // a data.Builtin name: mnist, fashion-mnist, cifar10, cifar100, libsvm, a9a, ijcnn1 or rcv1
	Model        string  `json:"model,omitempty"`         // the network (models.Available) or an ONNX file; "" = the dataset's paper model
	Init         string  `json:"init,omitempty"`          // x⁰ of an ONNX model: "" (its file's initialisers) or seed
	Trainable    string  `json:"trainable,omitempty"`     // an ONNX model's initialisers that torch trains (models.ImportOptions), comma-separated patterns
	DataDir      string  `json:"data_dir"`                // see data.Load; "" for the defaults
	Normalize    bool    `json:"normalize"`               // CIFAR-10, CIFAR-100: standardise each channel
	CoarseLabels bool    `json:"coarse_labels,omitempty"` // CIFAR-100: the 20 superclasses as labels
	ImageSize    int     `json:"image_size,omitempty"`    // images: side S of the S×S samples; 0 = data.DefaultImageSize
	Channels     int     `json:"channels,omitempty"`      // images: 1 or 3; 0 = 3
	TestSplit    float64 `json:"test_split,omitempty"`    // images without a test folder: held-out fraction; 0 = data.DefaultTestSplit
	SkipBad      bool    `json:"skip_bad,omitempty"`      // images: skip (and count) images that do not decode
	Features     int     `json:"features"`                // LibSVM feature count; 0 = from the data

	// Algo names the method (decentral.Algorithms) and Knobs holds the
	// method knobs given values of their own (decentral.MethodKnobs but
	// ρ: D-GET's period, CHOCO's γ, …), by flag name; a knob absent from
	// Knobs takes its method's default. config.json writes both under
	// "method" (see MarshalJSON). Knobs is shared by copies of a Config:
	// change it with Knobs.With and Without, or with Set.
	Algo  string          `json:"-"`
	Knobs decentral.Knobs `json:"-"`

	Nodes     int     `json:"nodes"`             // m
	Topology  string  `json:"topology"`          // er, ring, path, complete, star, torus, exp or an edge-list file
	PC        float64 `json:"pc"`                // Erdős–Rényi edge probability
	Mixing    string  `json:"mixing"`            // laplacian or metropolis
	Partition string  `json:"partition"`         // iid, label, dirichlet:α or shards:k
	Augment   string  `json:"augment,omitempty"` // training batches' augmentation (data.ParseAugment); "" = none
	Iters     int     `json:"iters"`             // communication rounds T
	Batch     int     `json:"batch"`             // minibatch size per node

	// The step sizes: η_0, GT-STORM's ρ (0 = 1/η_0²), the cube-root or
	// constant schedule, --schedule (cosine or step:S1,…[@γ]; "" = paper)
	// and the warm-up rounds K (0 = none), as the optimizer takes them.
	decentral.StepSizes

	Alpha    float64 `json:"alpha"`     // logistic regression's non-convex regulariser weight
	LinkDrop float64 `json:"link_drop"` // probability that an edge fails in a round

	// Training recipes (SPEC §14); all zero for the paper's.
	WeightDecay float64 `json:"weight_decay,omitempty"` // λ: every gradient + λx

	// Byzantine nodes (SPEC §11); all empty for none. Byzantine is a count
	// drawn from the seed or a comma list of node ids, Attack what they do,
	// Aggregate the rule every node mixes with ("" and "mean": gossip).
	Byzantine string `json:"byzantine,omitempty"`
	Attack    string `json:"attack,omitempty"`
	Aggregate string `json:"aggregate,omitempty"`

	// The simulated network (sim_seconds); all zero for none.
	LinkLatency   float64 `json:"link_latency,omitempty"`   // seconds per message
	LinkBandwidth float64 `json:"link_bandwidth,omitempty"` // bits per second per link and direction; 0 = unlimited
	Compute       float64 `json:"compute,omitempty"`        // seconds per minibatch gradient; 0 = measured
	Stragglers    string  `json:"stragglers,omitempty"`     // K:F, nodes 0..K−1 F times slower
	Speeds        string  `json:"speeds,omitempty"`         // file of per-node slowdown factors

	// Targets for time-to-target figures; 0 for none. They change no result.
	TargetAcc  float64 `json:"target_acc,omitempty"`  // test accuracy of x̄
	TargetStat float64 `json:"target_stat,omitempty"` // S(x) at most this

	EvalEvery        int `json:"eval_every"`         // rounds between metric rows
	LocalEvalSamples int `json:"local_eval_samples"` // test samples for the mean local accuracy; 0 = all
	GradSamples      int `json:"grad_samples"`       // training samples per node for ∇f(x̄); 0 = all
	CheckpointEvery  int `json:"checkpoint_every"`   // rounds between resume checkpoints; 0 = only at the end

	Seed    uint64 `json:"seed"`
	Workers int    `json:"workers"` // goroutines for node work; 0 = GOMAXPROCS (results do not depend on it)
	// MaxMemory is the memory the run may use, in bytes; 0 detects it (see
	// CheckMemory). Results do not depend on it.
	MaxMemory int64 `json:"max_memory"`

	// datasets is the registry Dataset is looked up in; nil for
	// data.Builtin (see WithDatasets).
	datasets *data.Registry
}

// Default returns the paper's MNIST setting (§4.2): GT-STORM on 10 nodes of
// an Erdős–Rényi graph with p_c = 0.5, label partition, η_0 = 0.01, batch
// 64, for a round count that takes a few minutes on two cores.
func Default() Config {
	return Config{
		Dataset:          "mnist",
		Normalize:        true,
		Algo:             decentral.GTSTORM,
		Nodes:            10,
		Topology:         "er",
		PC:               0.5,
		Mixing:           graph.MixLaplacian,
		Partition:        "label",
		Iters:            2000,
		Batch:            64,
		StepSizes:        decentral.StepSizes{Eta0: 0.01},
		Alpha:            models.DefaultAlpha,
		EvalEvery:        100,
		LocalEvalSamples: 1000,
		GradSamples:      100,
		CheckpointEvery:  200,
		Seed:             1,
	}
}

// DataName names the data for titles, summaries and tables: the file's
// name for a LibSVM file, else the dataset, with "-coarse" where it is
// trained on coarse labels (CIFAR-100's 20 superclasses).
func (c Config) DataName() string {
	if c.Dataset == "libsvm" && c.DataDir != "" {
		return filepath.Base(c.DataDir)
	}
	if c.CoarseLabels {
		// Another task than the fine labels' (20 classes, not 100): named
		// as data.LoadCIFAR100 names the sets, cifar100-coarse.
		return c.Dataset + "-coarse"
	}
	return c.Dataset
}

// ConfigError is a setting outside what is allowed. Flag names the
// command-line flag, so that the message reads as the user typed it.
type ConfigError struct {
	Flag  string
	Value any
	Want  string
}

func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("--%s \"\": want %s", e.Flag, e.Want)
	}
	return fmt.Sprintf("--%s %v: want %s", e.Flag, e.Value, e.Want)
}

// DefaultOut returns the output folder a run uses when none is given:
// runs/<timestamp>-<algo>-<dataset>.
func (c Config) DefaultOut(now time.Time) string {
	return fmt.Sprintf("runs/%s-%s-%s", now.Format("20060102-150405"), c.Algo, c.Dataset)
}

// IsLogReg reports whether the run trains the logistic regression (a LibSVM
// dataset), whose headline measure is the stationarity S(x) rather than
// test accuracy.
func (c Config) IsLogReg() bool {
	k, _ := c.datasetKind()
	return k.logReg
}

// ModelName returns the name of the model c trains: c.Model, or the
// paper's model of c's dataset when c.Model is empty.
func (c Config) ModelName() string {
	if c.Model != "" {
		return c.Model
	}
	k, _ := c.datasetKind()
	return k.paper
}

// modelWant returns what --model accepts when c's model is not one this
// build has or c's dataset cannot train, else "" (also for an unknown
// dataset, which --dataset reports).
func modelWant(c Config) string {
	k, ok := c.datasetKind()
	if !ok {
		return ""
	}
	var err error
	if k.logReg {
		_, err = NewModel(c, &data.Dataset{Shape: []int{1}, Classes: 2})
	} else {
		_, err = NewModel(c, nil)
	}
	if ce, ok := err.(*ConfigError); ok && ce.Flag == "model" {
		return ce.Want
	}
	return ""
}

// NewModel returns the model c trains on train: c.Model (see models.New),
// by default the paper's model of the dataset (the CNNs for the images,
// the non-convex logistic regression for LibSVM data). An image model
// takes the dataset's sample shape and class count; the logistic
// regression has one weight per feature of train, and needs LibSVM data.
// An unknown name, a name of a model this build does not have, and a model
// the data does not fit are a ConfigError of --model. A name ending in
// .onnx is a network file, imported on each call (see importONNX).
func NewModel(cfg Config, train *data.Dataset) (models.Model, error) {
	k, ok := cfg.datasetKind()
	if !ok {
		return nil, &ConfigError{"dataset", cfg.Dataset, fmt.Sprint(cfg.registry().Names())}
	}
	name := cfg.ModelName()
	if k.logReg {
		if name != models.LogRegName {
			return nil, &ConfigError{"model", name, fmt.Sprintf("%s on LibSVM data (--dataset %s); the image models need image data (--dataset %s)", models.LogRegName, cfg.Dataset, strings.Join(cfg.imageDatasets(), "|"))}
		}
		if train.Classes != 2 {
			return nil, fmt.Errorf("%s: logistic regression needs 2 classes, the data has %d", train.Name, train.Classes)
		}
		return models.NewLogReg(train.Dim(), cfg.Alpha), nil
	}
	shape, classes := k.shape, k.classes
	if train != nil && len(train.Shape) == 3 { // a folder of other images than the dataset's own
		shape, classes = train.Shape, max(classes, train.Classes)
	}
	if models.IsONNXName(name) {
		m, _, err := importONNX(cfg, shape, classes)
		return m, err
	}
	m, err := models.New(name, shape, classes)
	switch {
	case errors.Is(err, models.ErrUnknownModel):
		return nil, &ConfigError{"model", name, fmt.Sprintf("one of %s or FILE.onnx (unknown model %q)", models.Available, name)}
	case err != nil:
		return nil, &ConfigError{"model", name, fmt.Sprintf("one of %s or FILE.onnx for --dataset %s (%v)", models.Available, cfg.Dataset, err)}
	}
	return m, nil
}

// InputSpec describes what an image model was trained on, so that images
// can be turned into the samples it saw: model.gtck stores it in its run
// metadata under "input".
type InputSpec struct {
	Shape []int `json:"shape"` // one sample: [1 28 28] for MNIST, [3 32 32] for CIFAR-10
	// Mean and Std are the per-channel standardisation of the training
	// data (CIFAR-10 with Config.Normalize); absent for plain [0,1] scaling.
	Mean    []float32 `json:"mean,omitempty"`
	Std     []float32 `json:"std,omitempty"`
	Classes []string  `json:"classes"` // class names by label
}

// InputSpecOf returns the input description of a run's model m, trained
// on train (nil for plain [0,1] scaling): nil for models that are not
// image classifiers.
func InputSpecOf(cfg Config, train *data.Dataset, m models.Model) *InputSpec {
	shape, classes, ok := models.Classifier(m)
	if !ok {
		return nil
	}
	spec := &InputSpec{Shape: shape, Classes: cfg.classNames(classes)}
	if train != nil && train.Mean != nil {
		spec.Mean, spec.Std = slices.Clone(train.Mean), slices.Clone(train.Std)
	}
	return spec
}

// scheduleKnob returns the step-size field that the method knob named
// name, a knob of the schedule (decentral.Knob.Schedule), sets.
func (c *Config) scheduleKnob(name string) *float64 {
	f := c.StepSizes.KnobField(name)
	if f == nil {
		panic("train: no step-size field for the knob " + name)
	}
	return f
}
