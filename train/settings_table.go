package train

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/graph"
	"github.com/gtstorm/gtstorm/internal/memlimit"
	"github.com/gtstorm/gtstorm/models"
)

// The settings table: every run setting but the method knobs
// (settings_knobs.go), in the order of the flags and of config.json.

// dataSettings returns the settings of the data, the method's name, the
// graph and the step sizes, in the order Validate checks them.
func dataSettings() []Setting {
	return []Setting{
		{Name: "dataset", Usage: "dataset: " + strings.Join(Datasets(), "|"), Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Dataset) },
			want: func(c Config) string {
				if _, ok := c.datasetKind(); !ok {
					return strings.Join(c.registry().Names(), "|")
				}
				return ""
			}},
		{Name: "model", Usage: "network: " + models.Available + " (mlp: hidden layer widths, @P a dropout rate after each); empty: the dataset's paper model", Sweepable: true,
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
	}
}

// runSettings returns the settings after the method knobs, in the order
// Validate checks them.
func runSettings() []Setting {
	return []Setting{
		{Name: "weight-decay", Usage: "weight decay λ ≥ 0: every stochastic gradient becomes ∇f_i(x; ζ) + λx (all algorithms)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*floatValue)(&c.WeightDecay) },
			want:  finiteWhere(func(c Config) float64 { return c.WeightDecay }, nonNegative, "a finite weight decay λ ≥ 0")},
		{Name: "schedule", Usage: "step sizes: paper (SPEC §3, the default), constant, cosine or step:S1,S2,…[@γ] (η_0 times γ, default 0.1, at rounds ⌊S_k T⌋)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*scheduleValue)(&c.StepSchedule) },
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
				if c.CubeRoot && c.StepSchedule != "" && c.StepSchedule != decentral.ScheduleConstant {
					return "false with --schedule " + c.StepSchedule + ": --cube-root applies to --schedule paper"
				}
				return ""
			}},
		{Name: "constant-step", Usage: "put all algorithms on a constant step η_t = η_0 (overrides --cube-root); an alias of --schedule constant", Sweepable: true,
			field: func(c *Config) flag.Value { return (*boolValue)(&c.ConstantStep) },
			want: func(c Config) string {
				if c.ConstantStep && c.StepSchedule != "" && c.StepSchedule != decentral.ScheduleConstant {
					return "false with --schedule " + c.StepSchedule + ": --constant-step is --schedule constant"
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
	}
}
