package train

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/models"
)

// Config is every setting of one run. Its JSON form is config.json, enough
// to repeat the run; its field names follow the command-line flags.
type Config struct {
	Dataset   string  `json:"dataset"`   // mnist, cifar10, libsvm, a9a, ijcnn1 or rcv1
	DataDir   string  `json:"data_dir"`  // see data.Load; "" for the defaults
	Normalize bool    `json:"normalize"` // CIFAR-10: standardise each channel
	Features  int     `json:"features"`  // LibSVM feature count; 0 = from the data
	Algo      string  `json:"algo"`      // dsgd, gnsd or gt-storm
	Nodes     int     `json:"nodes"`     // m
	Topology  string  `json:"topology"`  // er, ring, path, complete, star, torus or an edge-list file
	PC        float64 `json:"pc"`        // Erdős–Rényi edge probability
	Mixing    string  `json:"mixing"`    // laplacian or metropolis
	Partition string  `json:"partition"` // iid, label, dirichlet:α or shards:k
	Iters     int     `json:"iters"`     // communication rounds T
	Batch     int     `json:"batch"`     // minibatch size per node
	Eta0      float64 `json:"eta0"`      // η_0
	Rho       float64 `json:"rho"`       // GT-STORM's ρ; 0 = 1/η_0²
	CubeRoot  bool    `json:"cube_root"` // all algorithms on the cube-root step-size schedule
	Alpha     float64 `json:"alpha"`     // logistic regression's non-convex regulariser weight

	EvalEvery        int `json:"eval_every"`         // rounds between metric rows
	LocalEvalSamples int `json:"local_eval_samples"` // test samples for the mean local accuracy; 0 = all
	GradSamples      int `json:"grad_samples"`       // training samples per node for ∇f(x̄); 0 = all
	CheckpointEvery  int `json:"checkpoint_every"`   // rounds between resume checkpoints; 0 = only at the end

	Seed    uint64 `json:"seed"`
	Workers int    `json:"workers"` // goroutines for node work; 0 = GOMAXPROCS (results do not depend on it)
	// MaxMemory is the memory the run may use, in bytes; 0 detects it (see
	// CheckMemory). Results do not depend on it.
	MaxMemory int64 `json:"max_memory"`
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
		Mixing:           decentral.MixLaplacian,
		Partition:        "label",
		Iters:            2000,
		Batch:            64,
		Eta0:             0.01,
		Alpha:            models.DefaultAlpha,
		EvalEvery:        100,
		LocalEvalSamples: 1000,
		GradSamples:      100,
		CheckpointEvery:  200,
		Seed:             1,
	}
}

// datasets lists the names Config.Dataset accepts.
var datasets = []string{"mnist", "cifar10", "libsvm", "a9a", "ijcnn1", "rcv1"}

// Datasets returns the dataset names a Config accepts.
func Datasets() []string { return slices.Clone(datasets) }

// IsLogReg reports whether the run trains the logistic regression (a LibSVM
// dataset), whose headline measure is the stationarity S(x) rather than
// test accuracy.
func (c Config) IsLogReg() bool { return c.Dataset != "mnist" && c.Dataset != "cifar10" }

// DataName names the data for titles: the file's name for a LibSVM file,
// else the dataset.
func (c Config) DataName() string {
	if c.Dataset == "libsvm" && c.DataDir != "" {
		return filepath.Base(c.DataDir)
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
	return fmt.Sprintf("--%s %v: want %s", e.Flag, e.Value, e.Want)
}

// Validate checks every setting without touching any file but an edge-list
// topology's; it returns a *ConfigError for the first bad one.
func (c Config) Validate() error {
	bad := func(flag string, v any, want string) error { return &ConfigError{flag, v, want} }
	finitePos := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }
	switch {
	case !slices.Contains(datasets, c.Dataset):
		return bad("dataset", c.Dataset, strings.Join(datasets, "|"))
	case c.Dataset == "libsvm" && c.DataDir == "":
		return bad("data-dir", `""`, "the LibSVM training FILE with --dataset libsvm")
	case c.Features < 0:
		return bad("features", c.Features, "0 (from the data) or a positive feature count")
	case !slices.Contains(decentral.Algorithms(), c.Algo):
		return bad("algo", c.Algo, strings.Join(decentral.Algorithms(), "|"))
	case c.Nodes < 1:
		return bad("nodes", c.Nodes, "at least 1")
	case c.Mixing != decentral.MixLaplacian && c.Mixing != decentral.MixMetropolis:
		return bad("mixing", c.Mixing, decentral.MixLaplacian+"|"+decentral.MixMetropolis)
	case c.Iters < 1:
		return bad("iters", c.Iters, "at least 1 round")
	case c.Batch < 1:
		return bad("batch", c.Batch, "at least 1 sample")
	case !finitePos(c.Eta0):
		return bad("eta0", c.Eta0, "a finite step size > 0")
	case !(c.Rho >= 0) || math.IsInf(c.Rho, 0):
		return bad("rho", c.Rho, "a finite ρ ≥ 0 (0 means 1/η_0²)")
	case !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0):
		return bad("alpha", c.Alpha, "a finite regulariser weight ≥ 0")
	case c.EvalEvery < 1:
		return bad("eval-every", c.EvalEvery, "at least 1 round")
	case c.LocalEvalSamples < 0:
		return bad("local-eval", c.LocalEvalSamples, "0 (the whole test set) or a positive sample count")
	case c.GradSamples < 0:
		return bad("grad-samples", c.GradSamples, "0 (each node's whole share) or a positive sample count")
	case c.CheckpointEvery < 0:
		return bad("checkpoint-every", c.CheckpointEvery, "0 (only at the end) or a positive round count")
	case c.Workers < 0:
		return bad("workers", c.Workers, "0 (one per core) or a positive goroutine count")
	}
	if _, err := data.ParsePartition(c.Partition); err != nil {
		return bad("partition", c.Partition, data.PartitionKinds)
	}
	return c.validateTopology()
}

// validateTopology checks the graph settings: a known generator, with a
// usable edge probability for Erdős–Rényi, or an existing edge-list file.
func (c Config) validateTopology() error {
	switch {
	case c.Topology == "er" && !(c.PC > 0 && c.PC <= 1):
		return &ConfigError{"pc", c.PC, "an edge probability in (0, 1]"}
	case slices.Contains(decentral.Topologies(), c.Topology):
		return nil
	}
	if st, err := os.Stat(c.Topology); err != nil || st.IsDir() {
		return &ConfigError{"topology", c.Topology,
			strings.Join(decentral.Topologies(), "|") + " or an edge-list file"}
	}
	return nil
}

// DefaultOut returns the output folder a run uses when none is given:
// runs/<timestamp>-<algo>-<dataset>.
func (c Config) DefaultOut(now time.Time) string {
	return fmt.Sprintf("runs/%s-%s-%s", now.Format("20060102-150405"), c.Algo, c.Dataset)
}
