package experiment

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/curves"
)

// Files a grid of runs writes into its output folder.
const (
	TableFile   = "table.md"
	ResultsFile = "results.csv"
	CurvesFile  = "curves.png"
)

// stat is a mean and standard deviation over n seeds.
type stat struct {
	mean, std float64
	n         int
}

// statOfValues returns the stat of xs.
func statOfValues(xs []float64) stat {
	m, sd := curves.MeanStd(xs)
	return stat{m, sd, len(xs)}
}

func statOf(sums []*train.Summary, f func(*train.Summary) float64) stat {
	xs := make([]float64, len(sums))
	for i, s := range sums {
		xs[i] = f(s)
	}
	return statOfValues(xs)
}

// fmt formats s with format: "mean" for one seed, "mean ± std" for
// several, "± 0" included (seeds that agree are not one run).
func (s stat) fmt(format string) string {
	if s.n < 2 {
		return fmt.Sprintf(format, s.mean)
	}
	return fmt.Sprintf(format+" ± "+format, s.mean, s.std)
}

// short is s in FormatShort's form: "mean" or "mean ± std", as fmt.
func (s stat) short() string {
	if s.n < 2 {
		return FormatShort(s.mean)
	}
	return FormatShort(s.mean) + " ± " + FormatShort(s.std)
}

// FormatShort formats x in at most 10 characters whatever its magnitude,
// keeping at least three significant digits: with two decimals where
// 1 ≤ |x| < 1e6 or x is 0 ("2.00", "123.46"), in %.3g otherwise ("0.5",
// "0.0123", "1.8e+303", "NaN").
func FormatShort(x float64) string {
	if a := math.Abs(x); x == 0 || a >= 1 && a < 1e6 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// completed returns the summaries of the runs that finished: neither
// diverged nor refused.
func completed(sums []*train.Summary) []*train.Summary {
	var out []*train.Summary
	for _, s := range sums {
		if s.Failure() == "" {
			out = append(out, s)
		}
	}
	return out
}

// cellLabel is a cell's label, marked when some of its runs diverged or
// were refused.
func cellLabel(r CellResult) string {
	n := len(r.Summaries) - len(completed(r.Summaries))
	switch {
	case n == 0:
		return r.Label
	case n == len(r.Summaries):
		return r.Label + " (" + cellFailure(r) + ")"
	}
	return fmt.Sprintf("%s (%d of %d seeds %s)", r.Label, n, len(r.Summaries), cellFailure(r))
}

// cellFailure names how a cell's runs that did not finish ended: "diverged",
// "refused", or "diverged or refused".
func cellFailure(r CellResult) string {
	var kinds []string
	for _, s := range r.Summaries {
		if f := s.Failure(); f != "" {
			kinds = appendNew(kinds, f)
		}
	}
	slices.Sort(kinds)
	return strings.Join(kinds, " or ")
}

// roundsNote returns " (N rounds)" for a cell of a grid whose cells ran
// different round counts (a comparison at an equal budget of samples), else
// "".
func roundsNote(res []CellResult, r CellResult) string {
	for _, o := range res {
		if o.Configs[0].Iters != res[0].Configs[0].Iters {
			return fmt.Sprintf(" (%d rounds)", r.Configs[0].Iters)
		}
	}
	return ""
}

// Report returns the Markdown tables of a grid: one row per cell with the
// final figures as mean ± std over its seeds and, when pivot is set (a
// compare grid), the paper's table of test accuracy, algorithms by
// partitions; or, for a grid that varies the Byzantine settings (compare
// or sweep), the honest nodes' test accuracy and loss as attacks by
// aggregation rules. Runs that diverged are left out of the means and
// counted in the cell's label; a cell whose every run diverged says so.
func Report(title string, res []CellResult, pivot bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	if len(res) > 0 && len(res[0].Configs) > 0 {
		fmt.Fprintf(&b, "%s; mean ± std over seeds.\n\n", sharedSettings(res))
	}
	writeTrainingSetNote(&b, res)
	if honestOnly(res) {
		b.WriteString("Runs with Byzantine nodes are measured on their honest nodes only: x̄ is the honest nodes' mean, and the consensus error, losses and mean local accuracy are theirs (summary.json lists the Byzantine nodes of each run).\n\n")
	}
	switch {
	case robustGrid(res):
		writeRobustPivots(&b, res)
	case pivot:
		writePivot(&b, res)
	}
	// On simulated networks the simulated time tells cells apart that the
	// other columns do not (stragglers change no trajectory).
	cols, simCol, simHead := 8, "", ""
	if anySimulated(res) {
		cols, simHead = 9, " simulated seconds |"
	}
	b.WriteString("| setting | test acc. of x̄ | test loss | mean local acc. | S(x) | consensus error | samples | bytes sent per node | seconds |" + simHead + "\n")
	b.WriteString("| --- |" + strings.Repeat(" ---: |", cols) + "\n")
	for _, r := range res {
		s := completed(r.Summaries)
		label := cellLabel(r) + roundsNote(res, r)
		if len(s) == 0 {
			fmt.Fprintf(&b, "| %s |%s\n", label, strings.Repeat(" "+cellFailure(r)+" |", cols))
			continue
		}
		if simHead != "" {
			simCol = " – |"
			if r.Configs[0].SimulatesNetwork() {
				simCol = " " + statOf(s, func(s *train.Summary) float64 { return float64(s.SimSeconds) }).fmt("%.4g") + " |"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |%s\n", label,
			statOf(s, func(s *train.Summary) float64 { return float64(s.FinalTestAcc) }).fmt("%.4f"),
			statOf(s, func(s *train.Summary) float64 { return float64(s.FinalTestLoss) }).fmt("%.4f"),
			statOf(s, func(s *train.Summary) float64 { return float64(s.LocalTestAcc) }).fmt("%.4f"),
			statOf(s, func(s *train.Summary) float64 { return float64(s.Stationarity) }).fmt("%.3g"),
			statOf(s, func(s *train.Summary) float64 { return float64(s.ConsensusError) }).fmt("%.3g"),
			statOf(s, func(s *train.Summary) float64 { return float64(s.Samples) }).fmt("%.0f"),
			statOf(s, func(s *train.Summary) float64 { return float64(s.BytesSentPerNode) }).fmt("%.0f"),
			statOf(s, func(s *train.Summary) float64 { return float64(s.Seconds) }).fmt("%.1f"), simCol)
	}
	writeTargets(&b, res)
	return b.String()
}

// writeTargets writes, when the grid has a target (--target-acc or
// --target-stat), what each cell took to reach it: rounds, samples, bytes
// sent per node and simulated seconds, as means over the seeds that reached
// it, or "not reached".
func writeTargets(b *strings.Builder, res []CellResult) {
	if len(res) == 0 || train.Target(res[0].Configs[0], nil) == nil {
		return
	}
	fmt.Fprintf(b, "\nTo reach %s (first evaluation round that meets it):\n\n", train.Target(res[0].Configs[0], nil).Target)
	b.WriteString("| setting | reached | rounds | samples | bytes sent per node | simulated seconds |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range res {
		var hit []*train.TargetReached
		for k := range r.Summaries {
			if t := train.Target(r.Configs[k], r.Rows[k]); t != nil && t.Reached {
				hit = append(hit, t)
			}
		}
		label := cellLabel(r) + roundsNote(res, r)
		if len(hit) == 0 {
			fmt.Fprintf(b, "| %s | not reached | – | – | – | – |\n", label)
			continue
		}
		of := func(f func(*train.TargetReached) float64) stat {
			xs := make([]float64, len(hit))
			for i, t := range hit {
				xs[i] = f(t)
			}
			return statOfValues(xs)
		}
		sim := of(func(t *train.TargetReached) float64 { return float64(t.SimSeconds) })
		simText := sim.short()
		if math.IsNaN(sim.mean) {
			simText = "–"
		}
		fmt.Fprintf(b, "| %s | %d of %d | %s | %s | %s | %s |\n", label, len(hit), len(r.Summaries),
			of(func(t *train.TargetReached) float64 { return float64(t.Round) }).fmt("%.0f"),
			of(func(t *train.TargetReached) float64 { return float64(t.Samples) }).fmt("%.0f"),
			of(func(t *train.TargetReached) float64 { return float64(t.BytesPerNode) }).fmt("%.3g"),
			simText)
	}
}

// started returns the summary of the first seed of the first cell whose
// run was started (not refused), or nil.
func started(res []CellResult) *train.Summary {
	for _, r := range res {
		if len(r.Summaries) > 0 && r.Summaries[0].Refused == "" {
			return r.Summaries[0]
		}
	}
	return nil
}

// sharedSettings describes the settings common to every cell of a grid
// (the varied one is in each row's label).
func sharedSettings(res []CellResult) string {
	c0, s0 := res[0].Configs[0], started(res)
	same := func(f func(train.Config) any) bool {
		for _, r := range res {
			if f(r.Configs[0]) != f(c0) {
				return false
			}
		}
		return true
	}
	parts := []string{c0.DataName()}
	add := func(f func(train.Config) any, text string) {
		if same(f) {
			parts = append(parts, text)
		}
	}
	add(func(c train.Config) any { return c.Nodes }, fmt.Sprintf("%d nodes", c0.Nodes))
	if same(func(c train.Config) any { return c.Topology }) && same(func(c train.Config) any { return c.PC }) && same(func(c train.Config) any { return c.Nodes }) {
		topo := c0.Topology
		switch topo {
		case "er":
			topo = fmt.Sprintf("Erdős–Rényi p_c = %g", c0.PC)
		case graph.ExpTopology:
			topo = "one-peer exponential"
		}
		topo += " topology"
		if same(func(c train.Config) any { return c.LinkDrop }) && c0.LinkDrop > 0 {
			topo += fmt.Sprintf(" with links failing w.p. %g per round", c0.LinkDrop)
		}
		if s0 != nil {
			lam := fmt.Sprintf("λ = %.4f for seed %d", float64(s0.Lambda), c0.Seed)
			if s0.LambdaMeaning != "" {
				lam += ", " + s0.LambdaMeaning
			}
			topo += " (" + lam + ")"
		}
		parts = append(parts, topo)
	}
	if n := c0.NetworkLabel(); n != "" && same(func(c train.Config) any { return c.NetworkLabel() }) {
		net := "simulated network " + n
		if s0 != nil {
			net += fmt.Sprintf(", %.3g s per gradient", float64(s0.ComputeSeconds))
		}
		parts = append(parts, net)
	}
	if c0.Attack != "" {
		add(func(c train.Config) any { return c.Byzantine + " " + c.Attack }, fmt.Sprintf("Byzantine nodes %s (%s)", c0.Byzantine, c0.Attack))
	}
	if c0.Aggregate != "" {
		add(func(c train.Config) any { return c.Aggregate }, "aggregate "+c0.Aggregate)
	}
	add(func(c train.Config) any { return c.Batch }, fmt.Sprintf("batch %d", c0.Batch))
	add(func(c train.Config) any { return c.Eta0 }, fmt.Sprintf("η_0 %g", c0.Eta0))
	add(func(c train.Config) any { return c.Iters }, fmt.Sprintf("%d rounds", c0.Iters))
	parts = append(parts, fmt.Sprintf("%d seed(s)", len(res[0].Configs)))
	return strings.Join(parts, ", ")
}

// writeTrainingSetNote says, where some cells' data hold no test set (a
// LibSVM file without FILE.t, a FEMNIST folder without test/), that their
// "test" figures are the training set's, as summary.json's eval_set
// records and as train's headline and note say: every cell's, or the cells
// it names.
func writeTrainingSetNote(b *strings.Builder, res []CellResult) {
	var cells []string
	for _, r := range res {
		for _, s := range r.Summaries {
			if s.EvalSet == "train" {
				cells = append(cells, r.Label)
				break
			}
		}
	}
	switch {
	case len(cells) == 0:
	case len(cells) == len(res):
		b.WriteString("The data hold no test set: the test accuracy and loss below are measured on the training set (summary.json: eval_set \"train\").\n\n")
	default:
		fmt.Fprintf(b, "The data of %s hold no test set: their test accuracy and loss are measured on the training set (summary.json: eval_set \"train\").\n\n", strings.Join(cells, "; "))
	}
}

// honestOnly reports whether some cell of a grid has Byzantine nodes.
func honestOnly(res []CellResult) bool {
	for _, r := range res {
		for _, c := range r.Configs {
			if c.Attack != "" {
				return true
			}
		}
	}
	return false
}

// writePivot writes test accuracy with algorithms as rows and partitions as
// columns, as the paper's table has it.
func writePivot(b *strings.Builder, res []CellResult) {
	var algos, parts []string
	acc := map[[2]string]string{}
	for _, r := range res {
		c := r.Configs[0]
		algos = appendNew(algos, algoLabel(c))
		parts = appendNew(parts, columnLabel(res, r))
		cell := pivotCell(r, "%.4f", func(s *train.Summary) float64 { return float64(s.FinalTestAcc) })
		acc[[2]string{algoLabel(c), columnLabel(res, r)}] = cell + roundsNote(res, r)
	}
	writeTable(b, "Test accuracy of the averaged model", "algorithm", algos, parts, acc, "")
}

// pivotCell is a cell of a pivot table: f over the runs of r that
// finished, mean ± std, noting those that did not; or how they ended when
// none did.
func pivotCell(r CellResult, format string, f func(*train.Summary) float64) string {
	s := completed(r.Summaries)
	if len(s) == 0 {
		return cellFailure(r)
	}
	cell := statOf(s, f).fmt(format)
	if len(s) < len(r.Summaries) {
		cell += fmt.Sprintf(" (%d of %d %s)", len(r.Summaries)-len(s), len(r.Summaries), cellFailure(r))
	}
	return cell
}

// writeTable writes a Markdown table titled title: a row per rows, headed
// corner, a column per cols, cell (row, col) from cells, or blank where
// cells has none.
func writeTable(b *strings.Builder, title, corner string, rows, cols []string, cells map[[2]string]string, blank string) {
	fmt.Fprintf(b, "%s:\n\n| %s |", title, corner)
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" ---: |", len(cols)) + "\n")
	for _, row := range rows {
		fmt.Fprintf(b, "| %s |", row)
		for _, c := range cols {
			fmt.Fprintf(b, " %s |", cmp.Or(cells[[2]string{row, c}], blank))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// algoLabel names c's algorithm with the knob its name may carry
// (decentral.VariantKnob), if given: "choco:topk:0.01".
func algoLabel(c train.Config) string {
	if k, ok := decentral.VariantKnob(); ok {
		if v, given := c.Knobs[k.Name]; given {
			return c.Algo + ":" + k.Format(v)
		}
	}
	return c.Algo
}

// columnLabel is r's column in a compare grid's table: its partition, its
// simulated network when the grid's cells run on several, and the values
// --vary set.
func columnLabel(res []CellResult, r CellResult) string {
	c := r.Configs[0]
	col := c.Partition
	for _, o := range res {
		if o.Configs[0].NetworkLabel() != c.NetworkLabel() {
			col += " / " + c.NetworkLabel()
			break
		}
	}
	return joinLabel(col, r.Vary)
}

// anySimulated reports whether a cell of res runs on a simulated network.
func anySimulated(res []CellResult) bool {
	return slices.ContainsFunc(res, func(r CellResult) bool { return r.Configs[0].SimulatesNetwork() })
}

// appendNew appends v to list unless list holds it.
func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}
