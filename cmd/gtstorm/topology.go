package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// topologyDenseMax is the largest node count for which `gtstorm topology`
// prints W as a full matrix; larger W are printed row by row, nonzeros only.
const topologyDenseMax = 32

// topologyMaxRounds bounds --rounds, and topologyMaxPrinted the entries it
// prints over all of them (rounds × nodes), so that a time-varying graph's
// listing stays a listing (at most a few hundred MB).
const (
	topologyMaxRounds  = 10_000
	topologyMaxPrinted = 1 << 24
)

// runTopology prints a communication graph, its mixing matrix and λ. The
// output is itself an edge-list file: everything but the edges is a comment.
func runTopology(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("topology",
		"topology [--topology er|ring|path|complete|star|torus|exp|FILE] [--nodes M] [--pc P] [--seed S] [--mixing laplacian|metropolis] [--link-drop P] [--rounds R]",
		stdout)
	var tf topologyFlags
	tf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: gtstorm topology [flags]\n\n")
		fmt.Fprintf(stdout, "Prints the graph's edges, its mixing matrix W (in full up to %d nodes, else by row)\n", topologyDenseMax)
		fmt.Fprintf(stdout, "and λ = max(|λ_2|, |λ_m|) of W. The output is a valid edge-list FILE.\n\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) { tf.nodesSet = tf.nodesSet || f.Name == "nodes" })
	if err := tf.check(); err != nil {
		return err
	}
	if tf.topo == graph.ExpTopology {
		return printExpTopology(stdout, &tf)
	}
	return printGraphTopology(stdout, &tf)
}

// topologyFlags are the flags of `gtstorm topology`.
type topologyFlags struct {
	topo, mixing  string
	nodes, rounds int
	pc, linkDrop  float64
	seed          uint64
	nodesSet      bool // --nodes was given
}

// register defines the flags on fs.
func (tf *topologyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&tf.topo, "topology", "er", "graph: "+strings.Join(graph.Generators(), "|")+
		", "+graph.ExpTopology+" (one-peer exponential: prints each round's pattern), or an edge-list FILE (one \"i j\" pair per line, nodes from 0, # comments, "+
		"an optional \"# nodes: N\" line giving the node count)")
	fs.IntVar(&tf.nodes, "nodes", 10, "number of nodes M (for a FILE: its node count, which must match if given)")
	fs.Float64Var(&tf.pc, "pc", 0.5, "edge probability p_c of the Erdős–Rényi graph (er)")
	fs.Uint64Var(&tf.seed, "seed", 1, "random seed of the Erdős–Rényi graph (er)")
	fs.StringVar(&tf.mixing, "mixing", graph.MixLaplacian, "mixing matrix: laplacian (W = I − 2L/(3 λ_max(L)), the paper's) or metropolis")
	fs.Float64Var(&tf.linkDrop, "link-drop", 0, "probability that each edge fails in a round: prints each round's failed edges, λ(W_t) and, up to 8 nodes, W_t (weights by --mixing)")
	fs.IntVar(&tf.rounds, "rounds", 0, "rounds of a time-varying topology to print (0: one period of exp, 4 rounds of --link-drop)")
}

// builtin reports whether --topology names a built-in graph rather than
// exp or an edge-list file.
func (tf *topologyFlags) builtin() bool {
	return slices.Contains(graph.Generators(), tf.topo)
}

// check returns a usage error for flag values out of range or that do not
// go together.
func (tf *topologyFlags) check() error {
	switch {
	case tf.nodes < 1 && (tf.builtin() || tf.nodesSet):
		return usagef("--nodes %d: want at least 1", tf.nodes)
	case tf.nodes > graph.MaxNodes:
		return usagef("--nodes %d: want at most %d, the largest graph whose mixing matrix is supported", tf.nodes, graph.MaxNodes)
	case !(tf.pc >= 0 && tf.pc <= 1):
		return usagef("--pc %v: want a probability in [0, 1]", tf.pc)
	case tf.mixing != graph.MixLaplacian && tf.mixing != graph.MixMetropolis:
		return usagef("--mixing %q: want %s or %s", tf.mixing, graph.MixLaplacian, graph.MixMetropolis)
	case !(tf.linkDrop >= 0 && tf.linkDrop < 1):
		return usagef("--link-drop %v: want a probability in [0, 1)", tf.linkDrop)
	case tf.rounds < 0 || tf.rounds > topologyMaxRounds:
		return usagef("--rounds %d: want 0 (the default) or a round count of at most %d", tf.rounds, topologyMaxRounds)
	case tf.rounds*max(tf.nodes, 1) > topologyMaxPrinted:
		return usagef("--rounds %d: want at most %d rounds of %d nodes (%d entries printed at most)", tf.rounds, topologyMaxPrinted/max(tf.nodes, 1), tf.nodes, topologyMaxPrinted)
	case tf.topo == graph.ExpTopology && tf.linkDrop > 0:
		return usagef("--link-drop %v: want 0 with --topology %s, whose graph changes every round already", tf.linkDrop, graph.ExpTopology)
	}
	return nil
}

// printExpTopology writes to stdout the one-peer exponential graph of
// --nodes nodes, round by round for --rounds rounds (by default a period).
func printExpTopology(stdout io.Writer, tf *topologyFlags) error {
	if tf.nodes < 1 {
		return usagef("--nodes %d: want at least 1", tf.nodes)
	}
	e, err := graph.OnePeerExponential(tf.nodes)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	printExp(w, e, tf.nodes, cmp.Or(tf.rounds, e.Period()))
	return w.Flush()
}

// printGraphTopology writes to stdout the graph --topology names (built in,
// or an edge-list file), its mixing matrix and λ, and, with --link-drop,
// the graph of each of --rounds rounds (by default 4).
func printGraphTopology(stdout io.Writer, tf *topologyFlags) error {
	m := tf.nodes
	if !tf.builtin() {
		if _, err := os.Stat(tf.topo); err != nil {
			return usagef("--topology %q: want one of %s or an edge-list file (%v)",
				tf.topo, strings.Join(graph.Generators(), "|"), err)
		}
		if !tf.nodesSet {
			m = 0
		}
	}
	g, err := graph.Generate(tf.topo, m, tf.pc, tf.seed)
	if err != nil {
		return err
	}
	mx, err := graph.NewMixing(tf.mixing, g)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	printTopology(w, tf.topo, tf.pc, tf.seed, mx)
	if tf.linkDrop > 0 {
		l, err := graph.NewLinkDrop(g, tf.mixing, tf.linkDrop, tf.seed)
		if err != nil {
			return err
		}
		printLinkDrop(w, l, tf.linkDrop, tf.seed, cmp.Or(tf.rounds, 4))
	}
	return w.Flush()
}

// printExp writes the one-peer exponential graph's pattern, round by round,
// as comments: whom each node mixes with, and W_t for small m.
func printExp(w io.Writer, e *graph.OnePeerExp, m, rounds int) {
	fmt.Fprintf(w, "# gtstorm topology exp: %d nodes, one-peer exponential graph (Ying et al., 2021)\n", m)
	fmt.Fprintf(w, "# round t: node i averages with node (i - 2^k) mod %d, k = t mod %d: W_t = (I + P_t)/2,\n", m, e.Period())
	fmt.Fprintf(w, "# doubly stochastic though directed; each node sends one vector per round.\n")
	for t := range rounds {
		fmt.Fprintf(w, "# round %d (k = %d):", t, t%e.Period())
		for i := range m {
			fmt.Fprintf(w, " %d<-%d", i, e.Peer(i, t))
		}
		fmt.Fprintln(w)
		if m <= topologyDenseMax && m <= 8 {
			printDense(w, e.Mixing(t))
		}
	}
	lam, err := e.Lambda(e.Period())
	if err != nil {
		fmt.Fprintf(w, "# lambda: %v\n", err)
		return
	}
	fmt.Fprintf(w, "# lambda per round over one period, ||W_%d...W_0 - J||^(1/%d) = %.6f", e.Period()-1, e.Period(), lam)
	fmt.Fprintf(w, " (each single W_t: %.6f)\n", e.Mixing(0).Lambda())
}

// printLinkDrop writes the first rounds of a graph whose edges fail at
// random: each round's failed edges, λ(W_t) and, for small m, W_t; then
// the mean λ.
func printLinkDrop(w io.Writer, l *graph.LinkDrop, p float64, seed uint64, rounds int) {
	fmt.Fprintf(w, "# links failing w.p. %g per round (seed %d); W_t is the %s matrix of the surviving edges\n", p, seed, l.Mixing(0).Name())
	base := l.Base()
	sum := 0.0
	for t := range rounds {
		mx := l.Mixing(t)
		sum += mx.Lambda()
		alive := map[[2]int]bool{}
		for _, e := range mx.Graph().Edges {
			alive[e] = true
		}
		var failed []string
		for _, e := range base.Edges {
			if !alive[e] {
				failed = append(failed, fmt.Sprintf("%d-%d", e[0], e[1]))
			}
		}
		fmt.Fprintf(w, "# round %d: %d of %d edges survive, failed: %s; lambda(W_t) = %.6f\n",
			t, len(mx.Graph().Edges), len(base.Edges), cmp.Or(strings.Join(failed, " "), "none"), mx.Lambda())
		if base.N <= 8 {
			printDense(w, mx)
		}
	}
	fmt.Fprintf(w, "# mean lambda over rounds 0-%d = %.6f\n", rounds-1, sum/float64(rounds))
}

// printDense writes W as comment rows.
func printDense(w io.Writer, mx *graph.Mixing) {
	for _, row := range mx.Dense() {
		fmt.Fprint(w, "#")
		for _, v := range row {
			fmt.Fprintf(w, " %.6f", v)
		}
		fmt.Fprintln(w)
	}
}

// printTopology writes the graph as an edge list, its node count declared,
// with W and λ in comments.
func printTopology(w io.Writer, name string, pc float64, seed uint64, mx *graph.Mixing) {
	g := mx.Graph()
	fmt.Fprintf(w, "# gtstorm topology %s: %d nodes", name, g.N)
	if name == "er" {
		fmt.Fprintf(w, ", p_c %g, seed %d", pc, seed)
	}
	fmt.Fprintln(w)
	// The node count, as graph.ReadEdgeList reads it back: without it a
	// graph whose last nodes are on no edge (one node, none) would not parse.
	fmt.Fprintf(w, "# nodes: %d\n", g.N)
	lo, sum := g.N, 0
	for i := 0; i < g.N; i++ {
		lo = min(lo, g.Degree(i))
		sum += g.Degree(i)
	}
	fmt.Fprintf(w, "# %d edges; degree min %d, mean %.2f, max %d; connected %v\n",
		len(g.Edges), lo, float64(sum)/float64(g.N), g.MaxDegree(), g.Connected())
	fmt.Fprintln(w, "# edges, one \"i j\" per line:")
	for _, e := range g.Edges {
		fmt.Fprintf(w, "%d %d\n", e[0], e[1])
	}
	fmt.Fprintf(w, "# mixing matrix W (%s):\n", mx.Name())
	if g.N <= topologyDenseMax {
		printDense(w, mx)
	} else {
		for i := 0; i < g.N; i++ {
			self, nb := mx.Row(i)
			fmt.Fprintf(w, "# row %d: %d=%.6f", i, i, self)
			for k, j := range mx.From(i) {
				fmt.Fprintf(w, " %d=%.6f", j, nb[k])
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "# lambda = max(|lambda_2|, |lambda_m|) = %.6f\n", mx.Lambda())
}
