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

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/experiment"
)

// gridFlags are the flags compare and sweep share beside the run settings.
type gridFlags struct {
	seeds int
	out   string
	force bool
	vary  varyFlag
}

func (g *gridFlags) register(fs *flag.FlagSet, name string) {
	fs.IntVar(&g.seeds, "seeds", 1, "seeds per setting (--seed, --seed+1, …)")
	fs.StringVar(&g.out, "out", "", "output folder (default runs/<timestamp>-"+name+")")
	fs.BoolVar(&g.force, "force", false, "run into an --out that holds other files or another grid (runs whose settings match are kept)")
	fs.Var(&g.vary, "vary", "NAME=V1,V2,…: a setting and the values the grid gives it, e.g. rho=0.1,1,10; repeated, the grid runs every combination (--vary byzantine=0,2 --vary attack=none,signflip:1 --vary aggregate=mean,clip: a combination without Byzantine nodes or with attack none is clean, one cell per rule). NAME is one of "+strings.Join(train.Sweepable(), ", "))
}

// varyFlag collects the values of a repeated --vary, as given.
type varyFlag []string

func (v *varyFlag) String() string { return strings.Join(*v, " ") }

func (v *varyFlag) Set(s string) error {
	*v = append(*v, s)
	return nil
}

// varies parses the --vary flags and refuses one for a setting also given
// as its own flag, or for one the command sets per cell (fixed: compare's
// algo and partition, set by --algos and --partitions).
func (g *gridFlags) varies(fs *flag.FlagSet, fixed map[string]string) ([]experiment.Vary, error) {
	var out []experiment.Vary
	for _, spec := range g.vary {
		v, err := experiment.ParseVary(spec)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if plural, ok := fixed[v.Name]; ok {
			return nil, usagef("--vary %s: %s varies %s with --%s; give --%s %s", spec, fs.Name(), v.Name, plural, plural, strings.Join(v.Values, ","))
		}
		if fs.Lookup(v.Name) != nil && isSet(fs, v.Name) {
			return nil, usagef("--%s: the grid varies %s (--vary %s); give its values there only", v.Name, v.Name, spec)
		}
		out = append(out, v)
	}
	return out, nil
}

// check validates the flags against the base settings.
func (g *gridFlags) check(cfg train.Config) error {
	if g.seeds < 1 || g.seeds > experiment.MaxGridRuns {
		return usagef("--seeds %d: want 1 to %d (the most runs of a grid)", g.seeds, experiment.MaxGridRuns)
	}
	if cfg.Seed > math.MaxUint64-uint64(g.seeds-1) {
		return usagef("--seed %d with --seeds %d: the seeds would pass %d and wrap around; want a smaller --seed", cfg.Seed, g.seeds, uint64(math.MaxUint64))
	}
	return nil
}

// runCompare runs algorithms × partitions × seeds and prints the paper's
// accuracy table.
func runCompare(args []string, stdout, stderr io.Writer) error {
	const synopsis = "compare [--algos A,B] [--partitions P,Q] [--vary NAME=V1,V2 …] [--seeds N] [run flags]"
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
	for _, a := range al {
		if name, _, _ := strings.Cut(a, ":"); !slices.Contains(decentral.Algorithms(), name) {
			return usagef("--algos %s: %q is no algorithm; want a comma list of %s (choco:SPEC names CHOCO's compressor)", *algos, a, strings.Join(decentral.Algorithms(), "|"))
		}
	}
	for _, p := range pl {
		if _, err := data.ParsePartition(p); err != nil {
			return usagef("--partitions %s: %q: %v", *parts, p, err)
		}
	}
	vary, err := g.varies(fs, map[string]string{"algo": "algos", "partition": "partitions"})
	if err != nil {
		return err
	}
	defaulted := g.out == ""
	if defaulted {
		g.out = fmt.Sprintf("runs/%s-compare-%s", time.Now().Format("20060102-150405"), cfg.Dataset)
	}
	if err := experiment.CheckRuns(len(al)*len(pl), g.seeds); err != nil {
		return usagef("--algos and --partitions: %v", err)
	}
	cells, err := experiment.VaryCells(experiment.CompareCells(cfg, al, pl, g.seeds), vary)
	if err != nil {
		return runError(err)
	}
	if err := knobsApply(fs, cells); err != nil {
		return err
	}
	title := fmt.Sprintf("%s: %s", cfg.DataName(), compareTitle(al, pl, vary))
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

// compareTitle names what a compare grid varies: algorithms × partitions,
// and the --vary settings after them, leaving out algorithms or partitions
// when there is one of them and a --vary (titles must fit the figure).
func compareTitle(algos, partitions []string, vary []experiment.Vary) string {
	if len(vary) == 0 {
		return "algorithms × partitions"
	}
	var names []string
	if len(algos) > 1 {
		names = append(names, "algorithms")
	}
	if len(partitions) > 1 {
		names = append(names, "partitions")
	}
	return strings.Join(append(names, experiment.VaryTitle(vary)), " × ")
}

// knobsApply refuses a method knob given as a flag (--gamma, --period, …)
// that no cell's method takes: the grid applies it to the cells whose
// method takes it (see experiment.CompareCells), and would drop it from
// every cell.
func knobsApply(fs *flag.FlagSet, cells []experiment.Cell) error {
	for _, name := range decentral.MethodKnobs() {
		if !isSet(fs, name) {
			continue
		}
		applies := func(c experiment.Cell) bool {
			return slices.ContainsFunc(c.Configs, func(cfg train.Config) bool { return train.KnobApplies(cfg, name) })
		}
		if len(cells) > 0 && !slices.ContainsFunc(cells, applies) {
			return usagef("--%s %v: want a grid with --algo %s, which --%s applies to; no cell of this grid runs it",
				name, fs.Lookup(name).Value, strings.Join(decentral.KnobMethods(name), ", "), name)
		}
	}
	return nil
}

// runSweep varies one setting, or several in every combination, and
// tabulates the results.
func runSweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep", "sweep --vary NAME=V1,V2,… [--vary NAME2=…] [--seeds N] [run flags]", stdout)
	cfg := train.Default()
	cfg.Flags(fs)
	var g gridFlags
	g.register(fs, "sweep-<name>")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(g.vary) == 0 {
		return usagef("--vary: want NAME=V1,V2,… with NAME one of %s", strings.Join(train.Sweepable(), ", "))
	}
	if err := g.check(cfg); err != nil {
		return err
	}
	vary, err := g.varies(fs, nil)
	if err != nil {
		return err
	}
	cells, err := experiment.VaryCells([]experiment.Cell{{Configs: experiment.Seeds(cfg, g.seeds)}}, vary)
	if err != nil {
		return runError(err)
	}
	if err := knobsApply(fs, cells); err != nil {
		return err
	}
	defaulted := g.out == ""
	if defaulted {
		g.out = fmt.Sprintf("runs/%s-sweep-%s", time.Now().Format("20060102-150405"), strings.Join(experiment.VaryNames(vary), "-"))
	}
	title := fmt.Sprintf("%s on %s: effect of %s", cfg.Algo, cfg.DataName(), experiment.VaryTitle(vary))
	return runGrid(cells, g, rerunCommand("sweep", args, g.out, defaulted), title, false, stdout, stderr)
}

// runGrid runs the cells, writes the report and prints the Markdown. again
// is the command that continues the grid after an interruption.
func runGrid(cells []experiment.Cell, g gridFlags, again, title string, pivot bool, stdout, stderr io.Writer) error {
	if len(cells) == 0 {
		return usagef("nothing to run: the lists of settings are empty")
	}
	for _, c := range cells {
		if err := checkDataDirs(c.Configs...); err != nil {
			return err
		}
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
