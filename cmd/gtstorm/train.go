package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

// configFlags binds the flags of one run's settings to cfg, whose values are
// the defaults.
func configFlags(fs *flag.FlagSet, cfg *train.Config) {
	fs.StringVar(&cfg.Dataset, "dataset", cfg.Dataset, "dataset: "+strings.Join(train.Datasets(), "|"))
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "MNIST-format folder, CIFAR-10 folder, LibSVM FILE (libsvm) or data folder (a9a, ijcnn1, rcv1); empty for the defaults (MNIST: the copy shipped with the GoMNIST module)")
	fs.BoolVar(&cfg.Normalize, "normalize", cfg.Normalize, "CIFAR-10: standardise each channel with the training set's mean and std")
	fs.IntVar(&cfg.Features, "features", cfg.Features, "LibSVM feature count (0: the largest index in the files)")
	fs.StringVar(&cfg.Algo, "algo", cfg.Algo, "algorithm: "+strings.Join(decentral.Algorithms(), "|"))
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "number of nodes m")
	fs.StringVar(&cfg.Topology, "topology", cfg.Topology, "graph: "+strings.Join(decentral.Topologies(), "|")+" or an edge-list FILE")
	fs.Float64Var(&cfg.PC, "pc", cfg.PC, "edge probability p_c of the Erdős–Rényi graph")
	fs.StringVar(&cfg.Mixing, "mixing", cfg.Mixing, "mixing matrix: laplacian (the paper's) or metropolis")
	fs.StringVar(&cfg.Partition, "partition", cfg.Partition, "data split over nodes: "+data.PartitionKinds)
	fs.IntVar(&cfg.Iters, "iters", cfg.Iters, "communication rounds T")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "minibatch size per node")
	fs.Float64Var(&cfg.Eta0, "eta0", cfg.Eta0, "initial step size η_0")
	fs.Float64Var(&cfg.Rho, "rho", cfg.Rho, "GT-STORM's ρ in β = 1 − ρη² (0: 1/η_0², so β_1 = 0)")
	fs.BoolVar(&cfg.CubeRoot, "cube-root", cfg.CubeRoot, "put all algorithms on the cube-root step-size schedule (paper appendix A.1)")
	fs.Float64Var(&cfg.Alpha, "alpha", cfg.Alpha, "logistic regression: weight α of the non-convex regulariser Σ x²/(1+x²)")
	fs.IntVar(&cfg.EvalEvery, "eval-every", cfg.EvalEvery, "rounds between evaluations (rows of metrics.csv)")
	fs.IntVar(&cfg.LocalEvalSamples, "local-eval", cfg.LocalEvalSamples, "test samples on which each local model's accuracy is measured (0: all)")
	fs.IntVar(&cfg.GradSamples, "grad-samples", cfg.GradSamples, "training samples per node for the global gradient norm at x̄ (0: the node's whole share)")
	fs.IntVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "rounds between resume checkpoints (0: only at the end and on a signal)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed: graph, partition, initialisation and minibatches")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "goroutines for the nodes' work (0: one per core); results do not depend on it")
	fs.Var(sizeFlag(&cfg.MaxMemory), "max-memory", "memory the run may use, e.g. 8GiB, 512MiB, 2GB or bytes (0: the cgroup limit or the available memory); a run estimated not to fit is refused")
}

// runTrain runs one training run.
func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", "train [flags]", stdout)
	cfg := train.Default()
	configFlags(fs, &cfg)
	out := fs.String("out", "", "output folder (default runs/<timestamp>-<algo>-<dataset>)")
	force := fs.Bool("force", false, "replace a previous run's outputs in --out")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		*out = cfg.DefaultOut(time.Now())
	}
	ctx, stop := signalContext(stderr, *out)
	defer stop()
	opt := progressOptions(*out, stderr)
	opt.Overwrite = *force
	sum, err := train.Train(ctx, cfg, opt)
	if err != nil {
		return runError(err)
	}
	printSummary(stdout, *out, sum)
	return nil
}

// runResume continues an interrupted run.
func runResume(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("resume", "resume --out DIR [--iters T]", stdout)
	out := fs.String("out", "", "output folder of the run to continue")
	iters := fs.Int("iters", 0, "total rounds to reach (0: the run's own count)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out: want the folder of the run to resume")
	}
	if *iters < 0 {
		return usagef("--iters %d: want 0 (the run's own count) or a round count", *iters)
	}
	ctx, stop := signalContext(stderr, *out)
	defer stop()
	sum, err := train.Resume(ctx, *out, *iters, progressOptions(*out, stderr))
	if err != nil {
		return runError(err)
	}
	printSummary(stdout, *out, sum)
	return nil
}

// runEval evaluates a saved model on a test set.
func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", "eval --checkpoint FILE [--dataset D] [--data-dir DIR]", stdout)
	ckpt := fs.String("checkpoint", "", "checkpoint file (model.gtck or checkpoint.gtck of a run)")
	dataset := fs.String("dataset", "", "dataset to evaluate on (default: the run's)")
	dir := fs.String("data-dir", "", "its folder or file (default: the run's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *ckpt == "" {
		return usagef("--checkpoint: want a checkpoint file")
	}
	res, err := train.Eval(*ckpt, *dataset, *dir)
	if err != nil {
		return runError(err)
	}
	fmt.Fprintf(stdout, "model %s (%d parameters) on %s (%d samples): test accuracy %.4f, test loss %.4f\n",
		res.Model, res.Params, res.Dataset, res.Samples, res.Acc, res.Loss)
	return nil
}

// signalContext returns a context cancelled by SIGINT or SIGTERM, after
// saying that the run will stop after its current round. A second signal
// stops the process at once (exit status 130) after removing the temporary
// files of a write in progress under out; the run then continues from its
// last checkpoint.
func signalContext(stderr io.Writer, out string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(stderr, "\n%v: stopping after the current round and writing a checkpoint (a second signal stops at once)\n", s)
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-ch:
			if out != "" {
				train.RemoveTemps(out)
			}
			fmt.Fprintf(stderr, "%v again: stopped at once; the run continues from its last checkpoint\n", s)
			os.Exit(130)
		case <-done:
		}
	}()
	return ctx, func() { signal.Stop(ch); close(done); cancel() }
}

// progressOptions reports progress on stderr: a bar on a terminal, plain
// lines otherwise.
func progressOptions(out string, stderr io.Writer) train.Options {
	return train.Options{Out: out, Progress: stderr, Bar: isTerminal(stderr)}
}

// runError turns a bad setting into a usage error (exit status 2).
func runError(err error) error {
	var ce *train.ConfigError
	if errors.As(err, &ce) {
		return usageError{err}
	}
	return err
}

// printSummary prints the headline figures of a finished run.
func printSummary(w io.Writer, out string, s *train.Summary) {
	fmt.Fprintf(w, "%s on %s, %s partition, %d nodes (λ = %.4f), %d rounds in %.1f s\n",
		s.Algo, s.Data, s.Partition, s.Nodes, float64(s.Lambda), s.CommRounds, float64(s.Seconds))
	fmt.Fprintf(w, "  test accuracy of x̄ %.4f, loss %.4f; mean local accuracy %.4f\n",
		float64(s.FinalTestAcc), float64(s.FinalTestLoss), float64(s.LocalTestAcc))
	fmt.Fprintf(w, "  S(x) %.4g = ‖∇f(x̄)‖² %.4g + consensus %.4g\n",
		float64(s.Stationarity), float64(s.GradNormSq), float64(s.ConsensusError))
	fmt.Fprintf(w, "  samples %d, bytes sent per node %d, state floats per node %d\n",
		s.Samples, s.BytesSentPerNode, s.StateFloatsPerNode)
	fmt.Fprintf(w, "  outputs in %s\n", out)
}
