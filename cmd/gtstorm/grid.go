package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

// runCompare runs algorithms × partitions × seeds and prints the paper's
// accuracy table.
func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", "compare [--algos A,B] [--partitions P,Q] [--seeds N] [run flags]", stdout)
	cfg := train.Default()
	configFlags(fs, &cfg)
	algos := fs.String("algos", strings.Join(decentral.Algorithms(), ","), "algorithms to compare, comma-separated")
	parts := fs.String("partitions", "iid,label", "partitions to compare, comma-separated")
	seeds := fs.Int("seeds", 1, "seeds per setting (--seed, --seed+1, …)")
	out := fs.String("out", "", "output folder (default runs/<timestamp>-compare-<dataset>)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *seeds < 1 {
		return usagef("--seeds %d: want at least 1", *seeds)
	}
	if *out == "" {
		*out = fmt.Sprintf("runs/%s-compare-%s", time.Now().Format("20060102-150405"), cfg.Dataset)
	}
	cells := train.CompareCells(cfg, splitList(*algos), splitList(*parts), *seeds)
	title := fmt.Sprintf("%s: algorithms × partitions", cfg.DataName())
	return runGrid(cells, *out, title, true, stdout, stderr)
}

// runSweep varies one setting and tabulates the results.
func runSweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep", "sweep --vary NAME=V1,V2,… [--seeds N] [run flags]", stdout)
	cfg := train.Default()
	configFlags(fs, &cfg)
	vary := fs.String("vary", "", "the setting to vary and its values, e.g. rho=0.1,1,10,100 (one of "+train.Sweepable+")")
	seeds := fs.Int("seeds", 1, "seeds per value (--seed, --seed+1, …)")
	out := fs.String("out", "", "output folder (default runs/<timestamp>-sweep-<name>)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	name, values, ok := strings.Cut(*vary, "=")
	if !ok || name == "" || values == "" {
		return usagef("--vary %q: want NAME=V1,V2,… with NAME one of %s", *vary, train.Sweepable)
	}
	if *seeds < 1 {
		return usagef("--seeds %d: want at least 1", *seeds)
	}
	cells, err := train.SweepCells(cfg, name, splitList(values), *seeds)
	if err != nil {
		return runError(err)
	}
	if *out == "" {
		*out = fmt.Sprintf("runs/%s-sweep-%s", time.Now().Format("20060102-150405"), name)
	}
	title := fmt.Sprintf("%s on %s: effect of %s", cfg.Algo, cfg.DataName(), name)
	return runGrid(cells, *out, title, false, stdout, stderr)
}

// runGrid runs the cells, writes the report and prints the Markdown.
func runGrid(cells []train.Cell, out, title string, pivot bool, stdout, stderr io.Writer) error {
	if len(cells) == 0 {
		return usagef("nothing to run: the lists of settings are empty")
	}
	ctx, stop := signalContext(stderr)
	defer stop()
	res, err := train.RunGrid(ctx, cells, out, progressOptions(out, stderr))
	if errors.Is(err, train.ErrInterrupted) {
		return fmt.Errorf("interrupted; run the same command again to continue: finished runs in %s are kept and the interrupted one resumes", out)
	}
	if err != nil {
		return runError(err)
	}
	md, err := train.WriteReport(out, title, res, pivot)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	fmt.Fprintf(stdout, "\ntables, per-run results and curves in %s\n", out)
	return nil
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
