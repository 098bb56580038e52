package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/experiment"
)

// gridFlags are the flags compare and sweep share beside the run settings.
type gridFlags struct {
	seeds int
	out   string
	force bool
}

func (g *gridFlags) register(fs *flag.FlagSet, name string) {
	fs.IntVar(&g.seeds, "seeds", 1, "seeds per setting (--seed, --seed+1, …)")
	fs.StringVar(&g.out, "out", "", "output folder (default runs/<timestamp>-"+name+")")
	fs.BoolVar(&g.force, "force", false, "run into an --out that holds other files or another grid (runs whose settings match are kept)")
}

// check validates the flags against the base settings.
func (g *gridFlags) check(cfg train.Config) error {
	if g.seeds < 1 {
		return usagef("--seeds %d: want at least 1", g.seeds)
	}
	if cfg.Seed > math.MaxUint64-uint64(g.seeds-1) {
		return usagef("--seed %d with --seeds %d: the seeds would pass %d and wrap around; want a smaller --seed", cfg.Seed, g.seeds, uint64(math.MaxUint64))
	}
	return nil
}

// runCompare runs algorithms × partitions × seeds and prints the paper's
// accuracy table.
func runCompare(args []string, stdout, stderr io.Writer) error {
	const synopsis = "compare [--algos A,B] [--partitions P,Q] [--seeds N] [run flags]"
	fs := newFlagSet("compare", synopsis, stdout)
	fs.Usage = func() { printFlags(stdout, fs, synopsis, "algo", "partition") } // set per cell
	cfg := train.Default()
	cfg.Flags(fs)
	algos := fs.String("algos", strings.Join(decentral.Algorithms(), ","), "algorithms to compare, comma-separated; choco:SPEC names CHOCO's compressor (e.g. choco:topk:0.01)")
	parts := fs.String("partitions", "iid,label", "partitions to compare, comma-separated")
	budget := fs.String("budget", "", "samples=N: give each algorithm the most rounds whose samples per node stay within N, instead of --iters rounds for all")
	networks := fs.String("networks", "", "simulated networks to run every cell on, comma-separated LATENCY/BANDWIDTH (e.g. 1ms/1Gbit,50ms/10Mbit)")
	var g gridFlags
	g.register(fs, "compare-<dataset>")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *budget != "" && isSet(fs, "iters") {
		return usagef("--iters: --budget gives each algorithm its own rounds; give one of them")
	}
	// compare sets these per cell: a value given for them would be ignored.
	for plural, single := range map[string]string{"algos": "algo", "partitions": "partition"} {
		if isSet(fs, single) {
			return usagef("--%s: compare runs every value of --%s; give --%s %s", single, plural, plural, fs.Lookup(single).Value)
		}
	}
	if err := g.check(cfg); err != nil {
		return err
	}
	al, err := uniqueList("algos", *algos)
	if err != nil {
		return err
	}
	pl, err := uniqueList("partitions", *parts)
	if err != nil {
		return err
	}
	if isSet(fs, "gamma") && !slices.ContainsFunc(al, isCHOCO) {
		return usagef("--gamma %v: γ is CHOCO's consensus step; --algos %s has no %s", cfg.Gamma, *algos, decentral.CHOCO)
	}
	defaulted := g.out == ""
	if defaulted {
		g.out = fmt.Sprintf("runs/%s-compare-%s", time.Now().Format("20060102-150405"), cfg.Dataset)
	}
	cells := experiment.CompareCells(cfg, al, pl, g.seeds)
	title := fmt.Sprintf("%s: algorithms × partitions", cfg.DataName())
	if *budget != "" {
		b, err := experiment.ParseBudget(*budget)
		if err != nil {
			return usagef("%v", err)
		}
		if cells, err = experiment.BudgetCells(cells, b); err != nil {
			return runError(err)
		}
		title += fmt.Sprintf(" at an equal budget of %d samples per node", b.Samples)
	}
	if *networks != "" {
		if isSet(fs, "link-latency") || isSet(fs, "link-bandwidth") {
			return usagef("--networks sets each cell's --link-latency and --link-bandwidth; give one or the other")
		}
		nl, err := uniqueList("networks", *networks)
		if err != nil {
			return err
		}
		if cells, err = experiment.NetworkCells(cells, nl); err != nil {
			return usagef("%v", err)
		}
		title += " on simulated networks"
	}
	return runGrid(cells, g, rerunCommand("compare", args, g.out, defaulted), title, true, stdout, stderr)
}

// isCHOCO reports whether a --algos entry names CHOCO (choco or choco:SPEC).
func isCHOCO(algo string) bool {
	name, _, _ := strings.Cut(algo, ":")
	return name == decentral.CHOCO
}

// runSweep varies one setting and tabulates the results.
func runSweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep", "sweep --vary NAME=V1,V2,… [--seeds N] [run flags]", stdout)
	cfg := train.Default()
	cfg.Flags(fs)
	vary := fs.String("vary", "", "the setting to vary and its values, e.g. rho=0.1,1,10,100 (one of "+strings.Join(train.Sweepable(), ", ")+")")
	var g gridFlags
	g.register(fs, "sweep-<name>")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	name, values, ok := strings.Cut(*vary, "=")
	if !ok || name == "" || values == "" {
		return usagef("--vary %q: want NAME=V1,V2,… with NAME one of %s", *vary, strings.Join(train.Sweepable(), ", "))
	}
	if fs.Lookup(name) != nil && isSet(fs, name) {
		return usagef("--%s: the sweep varies %s (--vary %s); give its values there only", name, name, *vary)
	}
	if err := g.check(cfg); err != nil {
		return err
	}
	vl, err := uniqueList("vary "+name, values)
	if err != nil {
		return err
	}
	cells, err := experiment.SweepCells(cfg, name, vl, g.seeds)
	if err != nil {
		return runError(err)
	}
	defaulted := g.out == ""
	if defaulted {
		g.out = fmt.Sprintf("runs/%s-sweep-%s", time.Now().Format("20060102-150405"), name)
	}
	title := fmt.Sprintf("%s on %s: effect of %s", cfg.Algo, cfg.DataName(), name)
	return runGrid(cells, g, rerunCommand("sweep", args, g.out, defaulted), title, false, stdout, stderr)
}

// runGrid runs the cells, writes the report and prints the Markdown. again
// is the command that continues the grid after an interruption.
func runGrid(cells []experiment.Cell, g gridFlags, again, title string, pivot bool, stdout, stderr io.Writer) error {
	if len(cells) == 0 {
		return usagef("nothing to run: the lists of settings are empty")
	}
	ctx, stop := signalContext(stderr, g.out)
	defer stop()
	opt := progressOptions(g.out, stderr)
	opt.Overwrite = g.force
	res, err := experiment.RunGrid(ctx, cells, g.out, opt)
	if errors.Is(err, train.ErrInterrupted) {
		return fmt.Errorf("interrupted; finished runs in %s are kept and the interrupted one resumes when you run: %s", g.out, again)
	}
	if err != nil {
		return runError(err)
	}
	md, skipped, err := experiment.WriteReport(g.out, title, res, pivot)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "note: %s\n", s)
	}
	fmt.Fprint(stdout, md)
	fmt.Fprintf(stdout, "\ntables, per-run results and curves in %s\n", g.out)
	return nil
}

// rerunCommand returns the command line that repeats a grid command into
// the same folder: args as given, plus --out when it was defaulted (the
// default carries a timestamp).
func rerunCommand(name string, args []string, out string, defaulted bool) string {
	words := []string{"gtstorm", name}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	if defaulted {
		words = append(words, "--out", shellQuote(out))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,:/+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// uniqueList splits a comma-separated flag value, dropping blanks, and
// refuses a value listed twice (it would run the same cell twice).
func uniqueList(flagName, s string) ([]string, error) {
	list := splitList(s)
	seen := map[string]bool{}
	for _, v := range list {
		if seen[v] {
			return nil, usagef("--%s %s: %s is listed twice", flagName, s, v)
		}
		seen[v] = true
	}
	return list, nil
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
