package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/gtstorm/gtstorm/data"
)

// runData dispatches `gtstorm data fetch|info`.
func runData(args []string, stdout, stderr io.Writer) error {
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "Usage: gtstorm data fetch NAME... [flags]   download, verify and unpack a dataset")
		fmt.Fprintln(w, "       gtstorm data info [flags]            list the datasets present, with sample counts")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Run 'gtstorm data fetch --help' or 'gtstorm data info --help' for their flags.")
	}
	if len(args) == 0 {
		return usagef("want a subcommand, fetch or info (see gtstorm data --help)")
	}
	switch args[0] {
	case "fetch":
		return runDataFetch(args[1:], stdout, stderr)
	case "info":
		return runDataInfo(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return flag.ErrHelp
	}
	return usagef("unknown subcommand %q (want fetch or info)", args[0])
}

// dataDirHelp describes --data-dir, naming the default folder.
func dataDirHelp() string {
	def, err := data.DefaultDataDir()
	if err != nil {
		def = "(none on this system: " + err.Error() + ")"
	}
	return "data folder for Fashion-MNIST, CIFAR-10, CIFAR-100 and the LibSVM sets; default " + def
}

// runDataFetch downloads datasets into the data folder.
func runDataFetch(args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, r := range data.Remotes() {
		names = append(names, r.Name)
	}
	fs := newFlagSet("data fetch", "data fetch "+strings.Join(names, "|")+"... [--data-dir DIR] [--force]", stdout)
	dir := fs.String("data-dir", "", dataDirHelp())
	force := fs.Bool("force", false, "download again and replace a dataset that is already present")
	base := fs.String("base-url", "", "fetch every file from this http(s) address instead of the publisher (a mirror)")
	fs.Uint64("seed", 1, "unused: fetching involves no randomness (accepted like every command's --seed)")
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: gtstorm data fetch %s... [flags]\n\n", strings.Join(names, "|"))
		fmt.Fprintln(stdout, "Downloads each named dataset over HTTPS, verifies it (Fashion-MNIST, CIFAR-10, CIFAR-100:")
		fmt.Fprintln(stdout, "published sizes and MD5s, then parsed in full; LibSVM: parsed in full against the published")
		fmt.Fprintln(stdout, "sample and feature counts) and moves it into the data folder only once verified:")
		fmt.Fprintln(stdout, "DIR/fashion-mnist/, DIR/cifar-10-batches-bin/, DIR/cifar-100-binary/, DIR/a9a and DIR/a9a.t,")
		fmt.Fprintln(stdout, "DIR/ijcnn1 and DIR/ijcnn1.t, DIR/rcv1 (training file only).")
		fmt.Fprintln(stdout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	sets, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	if len(sets) == 0 {
		return usagef("want a dataset to fetch: %s", strings.Join(names, ", "))
	}
	for _, s := range sets {
		if sp, ok := data.Builtin().Spec(s); ok && sp.Remote == nil && sp.FetchNote != "" {
			return fmt.Errorf("data fetch %s: %s", s, sp.FetchNote)
		}
		if !slices.Contains(names, s) {
			return usagef("unknown dataset %q (want %s)", s, strings.Join(names, ", "))
		}
	}
	// SIGTERM as well as SIGINT cancels the download, so that FetchRemote
	// removes its temporary folder and leaves the data folder as it was.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt := data.FetchOptions{BaseURL: *base, Progress: stderr, Bar: isTerminal(stderr), Force: *force}
	_, statErr := os.Stat(*dir)
	made := *dir != "" && errors.Is(statErr, os.ErrNotExist)
	for _, s := range sets {
		if err := data.Fetch(ctx, s, *dir, opt); err != nil {
			if made {
				os.Remove(*dir) // the folder this fetch made, if nothing came into it
			}
			return err
		}
	}
	return nil
}

// runDataInfo lists the datasets present, or shows a partition's per-node
// class histograms.
func runDataInfo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data info", "data info [--data-dir DIR] [--dataset NAME --partition SPEC --nodes M --seed S]", stdout)
	dir := fs.String("data-dir", "", dataDirHelp()+"; for --dataset mnist an MNIST-format folder (default: the copy in the GoMNIST module), for fashion-mnist its folder, for femnist a LEAF folder (train/*.json, test/*.json), for images an image folder (DIR/<class>/… or DIR/train/<class>/… and DIR/test/<class>/…; listed at 3x32x32 and --test-split 0.1), for libsvm the training FILE")
	dataset := fs.String("dataset", "mnist", "dataset whose partition to show with --partition: "+strings.Join(data.Names(), "|"))
	partition := fs.String("partition", "", "show each node's share and class histogram under this partition: "+data.PartitionKinds)
	nodes := fs.Int("nodes", 10, "number of nodes for --partition")
	seed := fs.Uint64("seed", 1, "random seed of the partition (iid, dirichlet, shards, and natural's order among writers of equal size)")
	coarse := fs.Bool("coarse-labels", false, "CIFAR-100: the 20 superclasses as labels, for --partition")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if *partition != "" {
		return printPartition(w, *dataset, *dir, *partition, *nodes, *seed, data.LoadOptions{CoarseLabels: *coarse})
	}
	return printDataFolder(w, *dir)
}

// printPartition writes to w each node's share and class histogram under
// the partition spec (as --partition gives it) of dataset, read from dir
// with opt, over nodes nodes with seed, and flushes w.
func printPartition(w *bufio.Writer, dataset, dir, partition string, nodes int, seed uint64, opt data.LoadOptions) error {
	spec, err := data.ParsePartition(partition)
	if err != nil {
		return usageError{fmt.Errorf("--partition: %w", err)}
	}
	if nodes < 1 {
		return usagef("--nodes %d: want at least 1", nodes)
	}
	if !slices.Contains(data.Names(), dataset) {
		return usagef("--dataset %q: want one of %s", dataset, strings.Join(data.Names(), ", "))
	}
	if opt.CoarseLabels {
		if s, _ := data.Builtin().Spec(dataset); !s.CoarseLabels {
			return usagef("--coarse-labels: only with --dataset cifar100 (%s has no coarse labels)", dataset)
		}
	}
	train, _, err := data.LoadWith(dataset, dir, opt)
	if err != nil {
		return err
	}
	p, err := spec.Apply(train, nodes, seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "partition %s of %s (%d samples) over %d nodes, seed %d\n", spec, train.Name, train.Len(), nodes, seed)
	if train.Writers != nil {
		fmt.Fprintf(w, "%5s %8s %8s  %s\n", "node", "samples", "writers", "samples per class")
		for i, idx := range p.Nodes {
			fmt.Fprintf(w, "%5d %8d %8d  %v\n", i, len(idx), train.WritersIn(idx), p.Hist[i])
		}
		return w.Flush()
	}
	fmt.Fprintf(w, "%5s %8s  %s\n", "node", "samples", "samples per class")
	for i, idx := range p.Nodes {
		fmt.Fprintf(w, "%5d %8d  %v\n", i, len(idx), p.Hist[i])
	}
	return w.Flush()
}

// printDataFolder writes to w what the data folder dir (by default
// data.DefaultDataDir) holds of each dataset, and flushes w.
func printDataFolder(w *bufio.Writer, dir string) error {
	folder := dir
	if folder == "" {
		var err error
		if folder, err = data.DefaultDataDir(); err != nil {
			return err
		}
	}
	st, err := data.Survey(folder)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "data folder: %s (set with --data-dir)\n\n", folder)
	for _, s := range st {
		printDataStatus(w, s)
	}
	return w.Flush()
}

// printDataStatus writes to w one dataset's lines of `gtstorm data info`:
// its name, state and path, a note on how to fetch or use it, and its
// error and splits where it has them.
func printDataStatus(w io.Writer, s data.Status) {
	state := "missing"
	switch {
	case s.Present && s.Err != nil:
		state = "damaged"
	case s.Present:
		state = "present"
	case s.Err != nil:
		state = "missing"
	}
	path := s.Path
	if path == "" {
		path = "-"
	}
	fmt.Fprintf(w, "%-8s %-8s %s\n", s.Name, state, path)
	note := s.Note
	switch {
	case !s.Present && s.Fetchable:
		note += "; run: gtstorm data fetch " + s.Name + " --data-dir " + s.DataDir
	case s.Present && s.DataDir != "" && !s.Fetchable:
		note += " (use --dataset " + s.Name + " --data-dir " + s.DataDir + ")"
	}
	fmt.Fprintf(w, "%-8s %-8s %s\n", "", "", note)
	if s.Err != nil {
		fmt.Fprintf(w, "%-8s %-8s error: %v\n", "", "", s.Err)
	}
	if s.Train != nil {
		fmt.Fprintf(w, "%-8s %-8s train: %v\n", "", "", s.Train)
	}
	if s.Test != nil {
		fmt.Fprintf(w, "%-8s %-8s test:  %v\n", "", "", s.Test)
	}
}

// parseWithArgs parses flags that may come before, between or after
// positional arguments and returns the positional ones.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseOnce(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// isTerminal reports whether w is a terminal (character device), where a
// progress bar can redraw itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
