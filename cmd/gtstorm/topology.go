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

	"github.com/gtstorm/gtstorm/decentral"
)

// topologyDenseMax is the largest node count for which `gtstorm topology`
// prints W as a full matrix; larger W are printed row by row, nonzeros only.
const topologyDenseMax = 32

// runTopology prints a communication graph, its mixing matrix and λ. The
// output is itself an edge-list file: everything but the edges is a comment.
func runTopology(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("topology",
		"topology [--topology er|ring|path|complete|star|torus|exp|FILE] [--nodes M] [--pc P] [--seed S] [--mixing laplacian|metropolis] [--link-drop P] [--rounds R]",
		stdout)
	topo := fs.String("topology", "er", "graph: "+strings.Join(decentral.Topologies(), "|")+
		", "+decentral.ExpTopology+" (one-peer exponential: prints each round's pattern), or an edge-list FILE (one \"i j\" pair per line, nodes from 0, # comments, "+
		"an optional \"# nodes: N\" line giving the node count)")
	nodes := fs.Int("nodes", 10, "number of nodes M (for a FILE: its node count, which must match if given)")
	pc := fs.Float64("pc", 0.5, "edge probability p_c of the Erdős–Rényi graph (er)")
	seed := fs.Uint64("seed", 1, "random seed of the Erdős–Rényi graph (er)")
	mixing := fs.String("mixing", decentral.MixLaplacian, "mixing matrix: laplacian (W = I − 2L/(3 λ_max(L)), the paper's) or metropolis")
	linkDrop := fs.Float64("link-drop", 0, "probability that each edge fails in a round: prints each round's failed edges, λ(W_t) and, up to 8 nodes, W_t (weights by --mixing)")
	rounds := fs.Int("rounds", 0, "rounds of a time-varying topology to print (0: one period of exp, 4 rounds of --link-drop)")
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
	nodesSet := false
	fs.Visit(func(f *flag.Flag) { nodesSet = nodesSet || f.Name == "nodes" })
	builtin := slices.Contains(decentral.Topologies(), *topo)
	switch {
	case *nodes < 1 && (builtin || nodesSet):
		return usagef("--nodes %d: want at least 1", *nodes)
	case !(*pc >= 0 && *pc <= 1):
		return usagef("--pc %v: want a probability in [0, 1]", *pc)
	case *mixing != decentral.MixLaplacian && *mixing != decentral.MixMetropolis:
		return usagef("--mixing %q: want %s or %s", *mixing, decentral.MixLaplacian, decentral.MixMetropolis)
	case !(*linkDrop >= 0 && *linkDrop < 1):
		return usagef("--link-drop %v: want a probability in [0, 1)", *linkDrop)
	case *rounds < 0:
		return usagef("--rounds %d: want 0 (the default) or a positive round count", *rounds)
	case *topo == decentral.ExpTopology && *linkDrop > 0:
		return usagef("--link-drop %v: want 0 with --topology %s, whose graph changes every round already", *linkDrop, decentral.ExpTopology)
	}
	if *topo == decentral.ExpTopology {
		if *nodes < 1 {
			return usagef("--nodes %d: want at least 1", *nodes)
		}
		e, err := decentral.OnePeerExponential(*nodes)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(stdout)
		printExp(w, e, *nodes, cmp.Or(*rounds, e.Period()))
		return w.Flush()
	}
	m := *nodes
	if !builtin {
		if _, err := os.Stat(*topo); err != nil {
			return usagef("--topology %q: want one of %s or an edge-list file (%v)",
				*topo, strings.Join(decentral.Topologies(), "|"), err)
		}
		if !nodesSet {
			m = 0
		}
	}
	g, err := decentral.NewTopology(*topo, m, *pc, *seed)
	if err != nil {
		return err
	}
	mx, err := decentral.NewMixing(*mixing, g)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	printTopology(w, *topo, *pc, *seed, mx)
	if *linkDrop > 0 {
		l, err := decentral.NewLinkDrop(g, *mixing, *linkDrop, *seed)
		if err != nil {
			return err
		}
		printLinkDrop(w, l, *linkDrop, *seed, cmp.Or(*rounds, 4))
	}
	return w.Flush()
}

// printExp writes the one-peer exponential graph's pattern, round by round,
// as comments: whom each node mixes with, and W_t for small m.
func printExp(w io.Writer, e *decentral.OnePeerExp, m, rounds int) {
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
func printLinkDrop(w io.Writer, l *decentral.LinkDrop, p float64, seed uint64, rounds int) {
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
func printDense(w io.Writer, mx *decentral.Mixing) {
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
func printTopology(w io.Writer, name string, pc float64, seed uint64, mx *decentral.Mixing) {
	g := mx.Graph()
	fmt.Fprintf(w, "# gtstorm topology %s: %d nodes", name, g.N)
	if name == "er" {
		fmt.Fprintf(w, ", p_c %g, seed %d", pc, seed)
	}
	fmt.Fprintln(w)
	// The node count, as decentral.ReadEdgeList reads it back: without it a
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
