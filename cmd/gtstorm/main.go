// Command gtstorm trains neural networks with decentralized algorithms
// (GT-STORM, GNSD, DSGD, D², D-GET, CHOCO-SGD) over simulated nodes or
// ranks on several processes, and runs the paper's experiments. Run `gtstorm help` for the list of commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// command is one subcommand: its name, a one-line summary, and its entry point.
// run receives the arguments after the command name and returns an error
// whose message is printed as one line; a usageError exits with status 2.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"train", "train with one algorithm and write metrics, summary, plot and checkpoints", runTrain},
		{"resume", "continue an interrupted run from its last checkpoint", runResume},
		{"eval", "test accuracy and loss of a saved model", runEval},
		{"export", "write a saved image model as an ONNX model (--model FILE --onnx FILE)", runExport},
		{"summary", "list a network's layers, output shapes and parameters (--model NAME|FILE.onnx|model.gtck)", runSummary},
		{"predict", "classify PNG or JPEG images with a saved image model", runPredict},
		{"compare", "run algorithms × partitions × seeds and print the accuracy table", runCompare},
		{"sweep", "vary settings (rho, pc, nodes, eta0, …; --vary once or more, every combination) and tabulate their effect", runSweep},
		{"bench", "time rounds of one algorithm and print one JSON line", runBench},
		{"topology", "print a communication graph, its mixing matrix W and λ", runTopology},
		{"rank", "run one rank (a process hosting some of the nodes) of a run spread over processes and hosts", runRank},
		{"node", "the former name of rank, kept so that existing scripts run", runNodeAlias},
		{"launch", "run a run as K local rank processes on loopback, writing the run folder as train does", runLaunch},
		{"certs", "make a CA and one certificate per rank for the mutual TLS of `rank`", runCerts},
		{"data", "fetch datasets (data fetch NAME) and list those present (data info)", runData},
	}
}

// usageError marks a bad flag or argument: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and turns its error into an exit status.
// No command is a usage error: the usage goes to stderr, exit status 2;
// `gtstorm help` prints it to stdout, exit status 0.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		printUsage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		if err := kernels.Check(); err != nil {
			fmt.Fprintf(stderr, "gtstorm %s: %v\n", c.name, err)
			return 2
		}
		err := advise(c.run(args[1:], stdout, stderr))
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		}
		fmt.Fprintf(stderr, "gtstorm %s: %v\n", c.name, err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	fmt.Fprintf(stderr, "gtstorm: unknown command %q (run 'gtstorm help' for the list)\n", args[0])
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "gtstorm: decentralized training with GT-STORM, GNSD, DSGD, D², D-GET and CHOCO-SGD")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: gtstorm <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'gtstorm <command> --help' for a command's flags.")
}

// newFlagSet returns a flag set for a subcommand that reports errors as
// values (never exits) and prints its help to stdout.
func newFlagSet(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { printFlags(stdout, fs, synopsis) }
	return fs
}

// printFlags prints the synopsis and the flags of fs, but hidden: flags
// that still parse, so that a command can refuse them with advice
// (compare's --algo), but are not offered.
func printFlags(w io.Writer, fs *flag.FlagSet, synopsis string, hidden ...string) {
	fmt.Fprintf(w, "Usage: gtstorm %s\n\n", synopsis)
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(hidden, f.Name) {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	shown.PrintDefaults()
}

// parseFlags parses args into fs, turning a parse failure into a usageError;
// --help returns flag.ErrHelp once the help is printed.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseOnce(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseOnce runs fs.Parse. The flag package prints the usage on every parse
// error; here only --help prints it (then flag.ErrHelp is returned), so that
// a bad value is one line (a usageError).
func parseOnce(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return flag.ErrHelp
	case err != nil:
		return usageError{err}
	}
	return nil
}
