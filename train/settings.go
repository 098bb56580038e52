package train

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/compress"
	"github.com/gtstorm/gtstorm/internal/memlimit"
	"github.com/gtstorm/gtstorm/models"
)

// Setting is one run setting of Config: its command-line flag, help text,
// whether a sweep may vary it, where it lives in a Config and what values it
// accepts. Adding a setting is one entry in settings plus its Config field
// and its use; the flag, its validation and `sweep --vary` follow.
type Setting struct {
	Name      string // the flag, without dashes
	Usage     string
	Sweepable bool // can `sweep --vary` it (it changes results)

	field func(c *Config) flag.Value // c's field, as a flag value
	// want returns what the setting accepts when c's value is not allowed,
	// else "". It may look at other settings (--data-dir at --dataset).
	want func(c Config) string
}

// atLeast returns a want function for an int setting of at least min.
func atLeast(get func(Config) int, min int, want string) func(Config) string {
	return func(c Config) string {
		if get(c) < min {
			return want
		}
		return ""
	}
}

// finiteWhere returns a want function for a float setting that must be
// finite and satisfy ok.
func finiteWhere(get func(Config) float64, ok func(float64) bool, want string) func(Config) string {
	return func(c Config) string {
		if x := get(c); !finite(x) || !ok(x) {
			return want
		}
		return ""
	}
}

// imagesOnly returns a want function for a setting of --dataset images:
// set (given) with another dataset it is refused, else want decides.
func imagesOnly(set func(Config) bool, want func(Config) string) func(Config) string {
	return func(c Config) string {
		if !set(c) {
			return ""
		}
		if c.Dataset != "images" {
			return "it only with --dataset images"
		}
		return want(c)
	}
}

func positive(x float64) bool    { return x > 0 }
func simSeconds(x float64) bool  { return x >= 0 && x <= 86400 }
func nonNegative(x float64) bool { return x >= 0 }

// settings returns the table of every run setting, in the order Validate
// checks them.
func settings() []Setting {
	return append([]Setting{
		{Name: "dataset", Usage: "dataset: " + strings.Join(Datasets(), "|"), Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Dataset) },
			want: func(c Config) string {
				if _, ok := c.datasetKind(); !ok {
					return strings.Join(c.registry().Names(), "|")
				}
				return ""
			}},
		{Name: "model", Usage: "network: " + models.Available + " (mlp: hidden layer widths); empty: the dataset's paper model", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Model) },
			want:  modelWant},
		{Name: "data-dir", Usage: "MNIST-format folder, Fashion-MNIST folder, CIFAR-10 or CIFAR-100 folder, LibSVM FILE (libsvm), image folder DIR/<class>/*.png|jpg (images), LEAF JSON folder holding train/ and test/ (femnist) or data folder (fashion-mnist, cifar10, cifar100, femnist, a9a, ijcnn1, rcv1); empty for the defaults (MNIST: the copy shipped with the GoMNIST module; Fashion-MNIST: the data folder's, else Debian's dataset-fashion-mnist)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.DataDir) },
			want: func(c Config) string {
				if c.Dataset == "libsvm" && c.DataDir == "" {
					return "the LibSVM training FILE with --dataset libsvm"
				}
				if c.Dataset == "images" && c.DataDir == "" {
					return "an image folder, DIR/<class>/*.png|jpg|jpeg, with --dataset images"
				}
				return ""
			}},
		{Name: "normalize", Usage: "CIFAR-10, CIFAR-100: standardise each channel with the training set's mean and std", Sweepable: true,
			field: func(c *Config) flag.Value { return (*boolValue)(&c.Normalize) }},
		{Name: "coarse-labels", Usage: "CIFAR-100: train on the 20 superclasses (coarse labels) instead of the 100 fine classes", Sweepable: true,
			field: func(c *Config) flag.Value { return (*boolValue)(&c.CoarseLabels) },
			want: func(c Config) string {
				if s, ok := c.dataset(); ok && c.CoarseLabels && !s.CoarseLabels {
					return "it only with --dataset cifar100 (" + c.Dataset + " has no coarse labels)"
				}
				return ""
			}},
		{Name: "image-size", Usage: "images: resize every image to S×S (area averaging when shrinking, bilinear when enlarging); 0: 32", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.ImageSize) },
			want: imagesOnly(func(c Config) bool { return c.ImageSize != 0 }, func(c Config) string {
				if c.ImageSize < 0 || c.ImageSize > data.MaxImageSize {
					return fmt.Sprintf("a side from 1 to %d pixels (0: %d)", data.MaxImageSize, data.DefaultImageSize)
				}
				return ""
			})},
		{Name: "channels", Usage: "images: 1 (grayscale, BT.601 luma) or 3 (colour, grey replicated); 0: 3", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.Channels) },
			want: imagesOnly(func(c Config) bool { return c.Channels != 0 }, func(c Config) string {
				if c.Channels != 1 && c.Channels != 3 {
					return "1 (grayscale) or 3 (colour)"
				}
				return ""
			})},
		{Name: "test-split", Usage: "images without DIR/test: the fraction of each class held out as the test set, the same images whatever --seed; 0: 0.1", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.TestSplit) },
			want: imagesOnly(func(c Config) bool { return c.TestSplit != 0 }, func(c Config) string {
				if !(c.TestSplit > 0 && c.TestSplit < 1) {
					return "a fraction in (0, 1) (0: 0.1)"
				}
				return ""
			})},
		{Name: "skip-bad", Usage: "images: skip images that do not decode, counting them, instead of refusing the folder",
			field: func(c *Config) flag.Value { return (*boolValue)(&c.SkipBad) },
			want:  imagesOnly(func(c Config) bool { return c.SkipBad }, func(Config) string { return "" })},
		{Name: "features", Usage: "LibSVM feature count (0: the largest index in the files)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.Features) },
			want:  atLeast(func(c Config) int { return c.Features }, 0, "0 (from the data) or a positive feature count")},
		{Name: "algo", Usage: "algorithm: " + strings.Join(decentral.Algorithms(), "|"), Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Algo) },
			want: func(c Config) string {
				if !slices.Contains(decentral.Algorithms(), c.Algo) {
					return strings.Join(decentral.Algorithms(), "|")
				}
				return ""
			}},
		{Name: "nodes", Usage: "number of nodes m", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.Nodes) },
			want:  atLeast(func(c Config) int { return c.Nodes }, 1, "at least 1")},
		{Name: "mixing", Usage: "mixing matrix: laplacian (the paper's) or metropolis", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Mixing) },
			want: func(c Config) string {
				if c.Mixing != graph.MixLaplacian && c.Mixing != graph.MixMetropolis {
					return graph.MixLaplacian + "|" + graph.MixMetropolis
				}
				return ""
			}},
		{Name: "iters", Usage: "communication rounds T", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.Iters) },
			want:  atLeast(func(c Config) int { return c.Iters }, 1, "at least 1 round")},
		{Name: "batch", Usage: "minibatch size per node", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.Batch) },
			want:  atLeast(func(c Config) int { return c.Batch }, 1, "at least 1 sample")},
		{Name: "eta0", Usage: "initial step size η_0", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.Eta0) },
			want:  finiteWhere(func(c Config) float64 { return c.Eta0 }, positive, "a finite step size > 0")},
		{Name: "rho", Usage: "GT-STORM's ρ in β = 1 − ρη² (0: 1/η_0², so β_1 = 0)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.Rho) },
			want:  finiteWhere(func(c Config) float64 { return c.Rho }, nonNegative, "a finite ρ ≥ 0 (0 means 1/η_0²)")},
		{Name: "period", Usage: "D-GET: rounds q between large-batch gradients", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.Period) },
			want:  atLeast(func(c Config) int { return c.Period }, 0, fmt.Sprintf("a positive round count (0: %d)", decentral.DefaultPeriod))},
		{Name: "big-batch", Usage: "D-GET: samples in the large batch S1, drawn from the node's share each time (0: the whole share)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.BigBatch) },
			want:  atLeast(func(c Config) int { return c.BigBatch }, 0, "0 (the node's whole share) or a positive sample count")},
		{Name: "momentum", Usage: "dsgdm, qg-dsgdm: momentum μ in [0, 1) (0: none, torch.optim.SGD's default)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.Momentum) },
			want:  finiteWhere(func(c Config) float64 { return c.Momentum }, func(x float64) bool { return x >= 0 && x < 1 }, "a momentum μ in [0, 1)")},
		{Name: "nesterov", Usage: "dsgdm, qg-dsgdm: Nesterov's momentum direction instead of heavy ball", Sweepable: true,
			field: func(c *Config) flag.Value { return (*boolValue)(&c.Nesterov) }},
		{Name: "local-steps", Usage: "dsgdm: local steps τ, each on a new minibatch, between gossips (default 1)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*localStepsValue)(&c.LocalSteps) },
			want:  atLeast(func(c Config) int { return c.LocalSteps }, 0, "at least 1 local step")},
		{Name: "weight-decay", Usage: "weight decay λ ≥ 0: every stochastic gradient becomes ∇f_i(x; ζ) + λx (all algorithms)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.WeightDecay) },
			want:  finiteWhere(func(c Config) float64 { return c.WeightDecay }, nonNegative, "a finite weight decay λ ≥ 0")},
		{Name: "schedule", Usage: "step sizes: paper (SPEC §3, the default), constant, cosine or step:S1,S2,…[@γ] (η_0 times γ, default 0.1, at rounds ⌊S_k T⌋)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*scheduleValue)(&c.Schedule) },
			want:  scheduleWant},
		{Name: "warmup", Usage: "warm-up rounds K: every η_t times min(1, (t+1)/K) (0: none)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.Warmup) },
			want: func(c Config) string {
				if c.Warmup < 0 || c.Warmup > c.Iters {
					return fmt.Sprintf("0 (none) or a warm-up of at most the run's %d rounds (--iters)", c.Iters)
				}
				return ""
			}},
		{Name: "cube-root", Usage: "put all algorithms on the cube-root step-size schedule (paper appendix A.1); a variant of --schedule paper", Sweepable: true,
			field: func(c *Config) flag.Value { return (*boolValue)(&c.CubeRoot) },
			want: func(c Config) string {
				if c.CubeRoot && c.Schedule != "" && c.Schedule != decentral.ScheduleConstant {
					return "false with --schedule " + c.Schedule + ": --cube-root applies to --schedule paper"
				}
				return ""
			}},
		{Name: "constant-step", Usage: "put all algorithms on a constant step η_t = η_0 (overrides --cube-root); an alias of --schedule constant", Sweepable: true,
			field: func(c *Config) flag.Value { return (*boolValue)(&c.ConstantStep) },
			want: func(c Config) string {
				if c.ConstantStep && c.Schedule != "" && c.Schedule != decentral.ScheduleConstant {
					return "false with --schedule " + c.Schedule + ": --constant-step is --schedule constant"
				}
				return ""
			}},
		{Name: "alpha", Usage: "logistic regression: weight α of the non-convex regulariser Σ x²/(1+x²)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.Alpha) },
			want:  finiteWhere(func(c Config) float64 { return c.Alpha }, nonNegative, "a finite regulariser weight ≥ 0")},
		{Name: "eval-every", Usage: "rounds between evaluations (rows of metrics.csv)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.EvalEvery) },
			want:  atLeast(func(c Config) int { return c.EvalEvery }, 1, "at least 1 round")},
		{Name: "local-eval", Usage: "test samples on which each local model's accuracy is measured (0: all)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.LocalEvalSamples) },
			want:  atLeast(func(c Config) int { return c.LocalEvalSamples }, 0, "0 (the whole test set) or a positive sample count")},
		{Name: "grad-samples", Usage: "training samples per node for the global gradient norm at x̄ (0: the node's whole share)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*intValue)(&c.GradSamples) },
			want:  atLeast(func(c Config) int { return c.GradSamples }, 0, "0 (each node's whole share) or a positive sample count")},
		{Name: "checkpoint-every", Usage: "rounds between resume checkpoints (0: only at the end and on a signal)",
			field: func(c *Config) flag.Value { return (*intValue)(&c.CheckpointEvery) },
			want:  atLeast(func(c Config) int { return c.CheckpointEvery }, 0, "0 (only at the end) or a positive round count")},
		{Name: "seed", Usage: "random seed: graph, partition, initialisation and minibatches",
			field: func(c *Config) flag.Value { return (*uintValue)(&c.Seed) }},
		{Name: "workers", Usage: "goroutines for the nodes' work (0: one per core); results do not depend on it",
			field: func(c *Config) flag.Value { return (*intValue)(&c.Workers) },
			want:  atLeast(func(c Config) int { return c.Workers }, 0, "0 (one per core) or a positive goroutine count")},
		{Name: "max-memory", Usage: "memory the run may use, e.g. 8GiB, 512MiB, 2GB or bytes (0: the cgroup limit or the available memory); a run estimated not to fit is refused",
			field: func(c *Config) flag.Value { return memlimit.NewFlag(&c.MaxMemory) },
			want: func(c Config) string {
				if c.MaxMemory < 0 {
					return "0 (detect) or a positive size"
				}
				return ""
			}},
		{Name: "partition", Usage: "data split over nodes: " + data.PartitionKinds, Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Partition) },
			want: func(c Config) string {
				spec, err := data.ParsePartition(c.Partition)
				if err != nil {
					return data.PartitionKinds
				}
				if s, ok := c.dataset(); ok && spec.Kind == "natural" && !s.Writers {
					return "natural only with a dataset whose samples have writers (femnist; " + c.Dataset + " has none)"
				}
				return ""
			}},
		{Name: "pc", Usage: "edge probability p_c of the Erdős–Rényi graph", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.PC) },
			want: func(c Config) string {
				if c.Topology == "er" && !(c.PC > 0 && c.PC <= 1) {
					return "an edge probability in (0, 1]"
				}
				return ""
			}},
		{Name: "topology", Usage: "graph: " + strings.Join(graph.Generators(), "|") + ", " + graph.ExpTopology + " (one-peer exponential, a new W every round) or an edge-list FILE", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Topology) },
			want: func(c Config) string {
				if c.Topology == graph.ExpTopology && decentral.NeedsStaticGraph(c.Algo) {
					return "a static graph with --algo " + c.Algo + ", which needs the same W every round"
				}
				if slices.Contains(graph.Generators(), c.Topology) || c.Topology == graph.ExpTopology {
					return ""
				}
				if st, err := os.Stat(c.Topology); err != nil || st.IsDir() {
					return strings.Join(graph.Generators(), "|") + ", " + graph.ExpTopology + " or an edge-list file"
				}
				return ""
			}},
		{Name: "link-drop", Usage: "probability that each edge of a static graph fails in a round, independently and seeded; W_t is then the --mixing rule's matrix of the surviving edges (0: no failures)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.LinkDrop) },
			want: func(c Config) string {
				switch {
				case !finite(c.LinkDrop) || c.LinkDrop < 0 || c.LinkDrop >= 1:
					return "a probability in [0, 1)"
				case c.LinkDrop > 0 && c.Topology == graph.ExpTopology:
					return "0 with --topology " + graph.ExpTopology + ", whose graph changes every round already"
				case c.LinkDrop > 0 && decentral.NeedsStaticGraph(c.Algo):
					return "0 with --algo " + c.Algo + ", which needs the same graph every round"
				}
				return ""
			}},
		{Name: "compress", Usage: "CHOCO's message compressor: none|topk:F|randk:F|qsgd:S|sign (F: fraction kept; S: levels, qsgd:7 is 4 bits a value)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Compress) },
			want: func(c Config) string {
				if c.Compress == "" || c.Compress == "none" {
					return ""
				}
				if _, err := compress.Parse(c.Compress); err != nil {
					return "none, topk:F or randk:F with F in (0, 1], qsgd:S with S in [1, 65535], or sign"
				}
				return ""
			}},
		{Name: "gamma", Usage: fmt.Sprintf("CHOCO's consensus step γ (0: %g)", decentral.DefaultGamma), Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.Gamma) },
			want: func(c Config) string {
				if !finite(c.Gamma) || c.Gamma < 0 || c.Gamma > 1 {
					return fmt.Sprintf("a consensus step in (0, 1] (0: %g)", decentral.DefaultGamma)
				}
				return ""
			}},
		{Name: "link-latency", Usage: "simulated network: seconds a message takes besides its bytes, e.g. 1ms or 50ms", Sweepable: true,
			field: func(c *Config) flag.Value { return (*secondsValue)(&c.LinkLatency) },
			want:  finiteWhere(func(c Config) float64 { return c.LinkLatency }, simSeconds, "a latency from 0 to a day (86400 s), so that simulated times stay finite")},
		{Name: "link-bandwidth", Usage: "simulated network: bandwidth of a link per direction, e.g. 1Gbit, 10Mbit or 100MB (bytes); 0 is unlimited", Sweepable: true,
			field: func(c *Config) flag.Value { return (*bandwidthValue)(&c.LinkBandwidth) },
			want: finiteWhere(func(c Config) float64 { return c.LinkBandwidth }, func(b float64) bool { return b == 0 || b >= 1 && b <= 1e15 },
				"0 (unlimited) or from 1 bit/s to 1 Pbit/s, so that simulated times stay finite")},
		{Name: "compute", Usage: "simulated network: seconds one minibatch gradient takes (0: measured on this machine when the network is simulated)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*secondsValue)(&c.Compute) },
			want:  finiteWhere(func(c Config) float64 { return c.Compute }, simSeconds, "a time from 0 to a day (86400 s), so that simulated times stay finite")},
		{Name: "stragglers", Usage: "simulated network: K:F makes nodes 0..K−1 F times slower to compute", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Stragglers) },
			want: func(c Config) string {
				if c.Stragglers == "" {
					return ""
				}
				if k, _, err := parseStragglers(c.Stragglers); err != nil || k > c.Nodes {
					return fmt.Sprintf("K:F with 1 ≤ K ≤ %d nodes F > 0 (at most 1e6) times slower (e.g. 1:5)", c.Nodes)
				}
				if c.Speeds != "" {
					return "no --stragglers with --speeds"
				}
				return ""
			}},
		{Name: "speeds", Usage: "simulated network: FILE of per-node slowdown factors, one per line in node order (1 is normal)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Speeds) },
			want: func(c Config) string {
				if c.Speeds == "" {
					return ""
				}
				st, err := os.Stat(c.Speeds)
				if err != nil || !st.Mode().IsRegular() {
					return "a regular file of one slowdown factor per node"
				}
				if limit := speedsMaxBytes(c.Nodes); st.Size() > limit {
					return fmt.Sprintf("a file of one slowdown factor per node (at most %d bytes for %d nodes)", limit, c.Nodes)
				}
				return ""
			}},
		{Name: "target-acc", Usage: "test accuracy of x̄ whose first round, samples, bytes and simulated seconds the summary and tables report (0: none)",
			field: func(c *Config) flag.Value { return (*floatValue)(&c.TargetAcc) },
			want:  finiteWhere(func(c Config) float64 { return c.TargetAcc }, func(a float64) bool { return a >= 0 && a <= 1 }, "an accuracy in (0, 1] (0: none)")},
		{Name: "target-stat", Usage: "stationarity S(x) at most this marks the target (LibSVM runs; 0: none)",
			field: func(c *Config) flag.Value { return (*floatValue)(&c.TargetStat) },
			want: func(c Config) string {
				if w := finiteWhere(func(c Config) float64 { return c.TargetStat }, nonNegative, "a stationarity > 0 (0: none)")(c); w != "" {
					return w
				}
				if c.TargetStat > 0 && c.TargetAcc > 0 {
					return "0 with --target-acc: a run has one target"
				}
				return ""
			}},
	}, slices.Concat(initSettings(), byzantineSettings())...)
}

// Settings returns the run settings, as `gtstorm train` registers them.
func Settings() []Setting { return settings() }

// Flags registers a flag for every run setting on fs, bound to c's fields,
// with c's values as the defaults.
func (c *Config) Flags(fs *flag.FlagSet) {
	for _, s := range settings() {
		fs.Var(s.field(c), s.Name, s.Usage)
	}
}

// Validate checks every setting without touching any file but an edge-list
// topology's; it returns a *ConfigError for the first bad one. A method
// knob (see decentral.MethodKnobs: --period, --gamma, …) given to a
// method that does not take it is refused, all by one rule (see
// knobWant).
func (c Config) Validate() error {
	for _, s := range settings() {
		w := ""
		if s.want != nil {
			w = s.want(c)
		}
		if w == "" {
			w = knobWant(s, c)
		}
		if w != "" {
			return &ConfigError{s.Name, s.field(&c).String(), w}
		}
	}
	return nil
}

// knobWant returns what setting s accepts when it is a method knob that c
// gives a value although c's method does not take it, else "".
func knobWant(s Setting, c Config) string {
	if !slices.Contains(decentral.MethodKnobs(), s.Name) || decentral.TakesKnob(c.Algo, s.Name) || !knobGiven(s, c) {
		return ""
	}
	return fmt.Sprintf("%s with --algo %s: --%s applies to --algo %s", knobOff(s), c.Algo, s.Name,
		strings.Join(decentral.KnobMethods(s.Name), ", "))
}

// knobGiven reports whether c gives the method knob s a value of its own:
// one other than its zero (which means the method's default), Default()'s
// (D-GET's period is written out there) and, for a string, none.
func knobGiven(s Setting, c Config) bool {
	var zero Config
	def := Default()
	v := s.field(&c).String()
	return v != s.field(&zero).String() && v != s.field(&def).String() && v != "none"
}

// knobOff returns the flag form of the value that leaves knob s unset: its
// zero, written none for a string.
func knobOff(s Setting) string {
	var zero Config
	return cmp.Or(s.field(&zero).String(), "none")
}

// WithoutForeignKnobs returns c with every method knob that c's method does
// not take set back to Default()'s value, but those named in keep: a grid
// cell's settings where a knob given for the whole grid (compare --gamma)
// applies to the cells whose method takes it. A kept knob is left as it is,
// for Validate to refuse where it does not apply (a varied one).
func (c Config) WithoutForeignKnobs(keep ...string) Config {
	def := Default()
	for _, s := range settings() {
		if slices.Contains(decentral.MethodKnobs(), s.Name) && !decentral.TakesKnob(c.Algo, s.Name) && !slices.Contains(keep, s.Name) {
			s.field(&c).Set(s.field(&def).String()) // Default()'s own value: it parses
		}
	}
	return c
}

// KnobApplies reports whether the setting named name applies to c's
// method: true for every setting but a method knob that c's method does not
// take.
func KnobApplies(c Config, name string) bool {
	return !slices.Contains(decentral.MethodKnobs(), name) || decentral.TakesKnob(c.Algo, name)
}

// Sweepable returns the names of the settings `sweep --vary` accepts.
func Sweepable() []string {
	var names []string
	for _, s := range settings() {
		if s.Sweepable {
			names = append(names, s.Name)
		}
	}
	return names
}

// Set sets the setting named name from its flag form, as `sweep --vary`
// does; only sweepable settings can be set.
func (c *Config) Set(name, value string) error {
	for _, s := range settings() {
		if s.Name != name || !s.Sweepable {
			continue
		}
		if err := s.field(c).Set(value); err != nil {
			return &ConfigError{"vary", name + "=" + value, err.Error()}
		}
		return nil
	}
	return &ConfigError{"vary", name, "one of " + strings.Join(Sweepable(), ", ")}
}

// Flag values over Config's fields. Their Set errors say what is wanted.
type (
	stringValue string
	intValue    int
	uintValue   uint64
	floatValue  float64
	boolValue   bool
)

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

// attackValue is --attack: a string setting whose value none, as `--vary
// attack=none,…` lists it, is no attack (the empty setting), so that
// config.json and the run are those of a run without the flag.
type attackValue string

func (v *attackValue) Set(s string) error {
	if s == AttackNone {
		s = ""
	}
	*v = attackValue(s)
	return nil
}
func (v *attackValue) String() string { return string(*v) }

// AttackNone is the --attack value that means no attack.
const AttackNone = "none"

// localStepsValue is --local-steps: τ ≥ 1, stored as 0 for the default 1
// so that config.json and the run are those of a run without the flag.
type localStepsValue int

func (v *localStepsValue) Set(s string) error {
	x, err := strconv.Atoi(s)
	if err != nil || x < 1 {
		return fmt.Errorf("at least 1 local step")
	}
	if x == 1 {
		x = 0
	}
	*v = localStepsValue(x)
	return nil
}
func (v *localStepsValue) String() string { return strconv.Itoa(max(int(*v), 1)) }

// scheduleValue is --schedule: paper, the default, is stored as "" so
// that config.json and the run are those of a run without the flag.
type scheduleValue string

func (v *scheduleValue) Set(s string) error {
	if s == decentral.SchedulePaper {
		s = ""
	}
	*v = scheduleValue(s)
	return nil
}
func (v *scheduleValue) String() string { return cmp.Or(string(*v), decentral.SchedulePaper) }

// scheduleWant checks --schedule's spec (decentral.ParseSchedule).
func scheduleWant(c Config) string {
	_, _, err := decentral.ParseSchedule(c.Schedule)
	if err == nil {
		return ""
	}
	detail := strings.TrimPrefix(err.Error(), fmt.Sprintf("schedule %q: ", c.Schedule))
	if strings.HasPrefix(detail, "want ") {
		return decentral.ScheduleWant
	}
	return decentral.ScheduleWant + " (" + detail + ")"
}

func (v *intValue) Set(s string) error {
	x, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("an integer")
	}
	*v = intValue(x)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

func (v *uintValue) Set(s string) error {
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("an integer from 0 to %d", uint64(math.MaxUint64))
	}
	*v = uintValue(x)
	return nil
}
func (v *uintValue) String() string { return strconv.FormatUint(uint64(*v), 10) }

func (v *floatValue) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("a number")
	}
	*v = floatValue(x)
	return nil
}
func (v *floatValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }

func (v *boolValue) Set(s string) error {
	x, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("true or false")
	}
	*v = boolValue(x)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
