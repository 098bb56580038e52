package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/experiment"
	"github.com/gtstorm/gtstorm/train/modelfile"
)

// runTrain runs one training run.
func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", "train [flags]", stdout)
	cfg := train.Default()
	cfg.Flags(fs)
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
	iters := fs.Int("iters", 0, "total rounds to reach (0: the run's own count; a run with --schedule cosine or step resumes only to its own)")
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
	if *dataset != "" && !slices.Contains(train.Datasets(), *dataset) {
		return usagef("--dataset %q: want one of %s", *dataset, strings.Join(train.Datasets(), "|"))
	}
	res, err := modelfile.Eval(*ckpt, *dataset, *dir)
	if err != nil {
		return runError(err)
	}
	set := "test"
	if res.OnTrain {
		set = "training-set"
		fmt.Fprintf(stderr, "note: the data hold no test set: the model is evaluated on the training set, %s\n", res.Dataset)
	}
	fmt.Fprintf(stdout, "model %s (%d parameters) on %s (%d samples): %s accuracy %.4f, %s loss %.4f\n",
		res.Model, res.Params, res.Dataset, res.Samples, set, res.Acc, set, res.Loss)
	return nil
}

// checkDataDirs refuses, before anything is written, a --data-dir given
// to any of cfgs that does not exist: train finds it missing before it
// makes its folder, but a grid, launch and rank make theirs first.
func checkDataDirs(cfgs ...train.Config) error {
	for _, c := range cfgs {
		if c.DataDir == "" {
			continue
		}
		if _, err := os.Stat(c.DataDir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--data-dir %s: no such file or folder; want the dataset's file or folder (gtstorm data fetch NAME --data-dir DIR downloads a fetchable one)", c.DataDir)
		} else if err != nil {
			return fmt.Errorf("--data-dir %s: %v", c.DataDir, err)
		}
	}
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
	var (
		ce  *train.ConfigError
		dup *experiment.DuplicateCellsError
	)
	if errors.As(err, &ce) || errors.As(err, &dup) {
		return usageError{err}
	}
	return err
}

// printSummary prints the headline figures of a finished run.
func printSummary(w io.Writer, out string, s *train.Summary) {
	fmt.Fprintf(w, "%s on %s, %s partition, %d nodes (λ = %.4f), %d rounds in %.1f s\n",
		s.Algo, s.Data, s.Partition, s.Nodes, float64(s.Lambda), s.CommRounds, float64(s.Seconds))
	if s.Measured != "" {
		fmt.Fprintf(w, "  attack %s, aggregate %s; measured on %s\n", s.Attack, cmp.Or(s.Aggregate, "mean"), s.Measured)
	} else if s.Aggregate != "" {
		fmt.Fprintf(w, "  aggregate %s\n", s.Aggregate)
	}
	set := "test"
	if s.EvalSet == "train" {
		set = "training-set" // the data hold no test set
	}
	fmt.Fprintf(w, "  %s accuracy of x̄ %.4f, loss %.4f; mean local accuracy %.4f\n",
		set, float64(s.FinalTestAcc), float64(s.FinalTestLoss), float64(s.LocalTestAcc))
	fmt.Fprintf(w, "  S(x) %.4g = ‖∇f(x̄)‖² %.4g + consensus %.4g\n",
		float64(s.Stationarity), float64(s.GradNormSq), float64(s.ConsensusError))
	fmt.Fprintf(w, "  samples %d, bytes sent per node %d, state floats per node %d\n",
		s.Samples, s.BytesSentPerNode, s.StateFloatsPerNode)
	if s.NetworkWaitPerRound > 0 {
		fmt.Fprintf(w, "  rank 0 waited %.4f s per round for its neighbours\n", float64(s.NetworkWaitPerRound))
	}
	if s.CompressionRatio > 1 {
		fmt.Fprintf(w, "  messages %.1f times smaller than float32 vectors\n", float64(s.CompressionRatio))
	}
	if s.SimSeconds > 0 {
		fmt.Fprintf(w, "  %s simulated seconds (%.3g s per gradient)\n", experiment.FormatShort(float64(s.SimSeconds)), float64(s.ComputeSeconds))
	}
	if t := s.Target; t != nil {
		if t.Reached {
			fmt.Fprintf(w, "  %s at round %d (%d samples, %d bytes per node", t.Target, t.Round, t.Samples, t.BytesPerNode)
			if t.SimSeconds > 0 {
				fmt.Fprintf(w, ", %s simulated seconds", experiment.FormatShort(float64(t.SimSeconds)))
			}
			fmt.Fprintln(w, ")")
		} else {
			fmt.Fprintf(w, "  %s not reached\n", t.Target)
		}
	}
	fmt.Fprintf(w, "  outputs in %s\n", out)
}
