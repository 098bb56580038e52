package experiment

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/curves"
)

// WriteReport writes a grid's table.md, results.csv (one line per run) and
// curves.png (one curve per cell, ±1 std band over seeds) into out, and
// returns the Markdown and what the plot had to leave out.
func WriteReport(out, title string, res []CellResult, pivot bool) (md string, skipped []string, err error) {
	md = Report(title, res, pivot)
	if err := atomicfile.WriteBytes(filepath.Join(out, TableFile), []byte(md)); err != nil {
		return "", nil, err
	}
	var csv strings.Builder
	csv.WriteString("setting,algo,partition,seed,nodes,iters,final_test_acc,final_test_loss,local_test_acc,stationarity,consensus_error,grad_norm_sq,samples,bytes_sent_per_node,seconds,sim_seconds,status\n")
	for _, r := range res {
		for k, s := range r.Summaries {
			status := "finished"
			switch {
			case s.Refused != "":
				status = "refused: " + s.Refused
			case s.Diverged != "":
				status = s.DivergedStatus()
			}
			fmt.Fprintf(&csv, "%s,%s,%s,%d,%d,%d,%g,%g,%g,%g,%g,%g,%d,%d,%.3f,%g,%s\n", csvQuote(r.Label), s.Algo, s.Partition,
				r.Configs[k].Seed, s.Nodes, s.Iters, float64(s.FinalTestAcc), float64(s.FinalTestLoss),
				float64(s.LocalTestAcc), float64(s.Stationarity), float64(s.ConsensusError), float64(s.GradNormSq),
				s.Samples, s.BytesSentPerNode, float64(s.Seconds), simSecondsOf(r.Configs[k], s), csvQuote(status))
		}
	}
	if err := atomicfile.WriteBytes(filepath.Join(out, ResultsFile), []byte(csv.String())); err != nil {
		return "", nil, err
	}
	cs := gridCurves(res, pivot)
	path := filepath.Join(out, CurvesFile)
	skipped, err = curves.PlotReport(path, title, cs)
	if err != nil {
		return "", nil, err
	}
	if note := looksNote(cs); note != "" {
		skipped = append(skipped, note)
	}
	for i, s := range skipped {
		skipped[i] = path + ": " + s
	}
	return md, skipped, nil
}

// csvQuote quotes s as a CSV field (RFC 4180): in double quotes, each
// double quote doubled. (Go's %q escapes with backslashes, which CSV
// readers keep: a label holding " or \ would read back otherwise.)
func csvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// meanOver returns the mean over runs of f of their k-th rows.
func meanOver(runs [][]train.Row, k int, f func(train.Row) float64) float64 {
	s := 0.0
	for _, r := range runs {
		s += f(r[k])
	}
	return s / float64(len(runs))
}

// simulated reports whether every cell of a grid simulates a network, so
// that its curves are drawn against simulated seconds.
func simulated(res []CellResult) bool {
	for _, r := range res {
		if !r.Configs[0].SimulatesNetwork() {
			return false
		}
	}
	return len(res) > 0
}

// simSecondsOf is a run's simulated seconds for results.csv: NaN without a
// simulated network, as in metrics.csv.
func simSecondsOf(c train.Config, s *train.Summary) float64 {
	if !c.SimulatesNetwork() {
		return math.NaN()
	}
	return float64(s.SimSeconds)
}

// gridCurves returns the curves of a grid's figure: one per cell, averaging
// the runs that finished (or showing the diverged ones up to where they
// stopped when none did). A compare grid (pivot) gives each algorithm a
// colour and each partition a line style; a sweep gives each value a
// colour; a robustness study, each group × rule a colour and each attack a
// line style.
func gridCurves(res []CellResult, pivot bool) []curves.Curve {
	cs := make([]curves.Curve, len(res))
	var algos, parts []string
	for _, r := range res {
		algos = appendNew(algos, algoLabel(r.Configs[0]))
		parts = appendNew(parts, columnLabel(res, r))
	}
	var robustColour, robustStyle []int
	if robustGrid(res) {
		robustColour, robustStyle = robustStyles(res)
	}
	for i, r := range res {
		// The curve averages the runs that finished, or shows the diverged
		// ones up to where they stopped when none did.
		var runs, stopped [][]train.Row
		for k, s := range r.Summaries {
			switch s.Failure() {
			case "":
				runs = append(runs, r.Rows[k])
			case "diverged":
				stopped = append(stopped, r.Rows[k])
			}
		}
		if len(runs) == 0 {
			runs = stopped // refused runs have no rows to draw
		}
		cs[i] = train.CurveOf(cellLabel(r), runs)
		cs[i].Colour, cs[i].Style = i, 0
		if roundsNote(res, r) != "" {
			// Cells of an equal budget of samples ran different rounds:
			// drawn against the samples a node drew, they share an axis.
			cs[i].XLabel = "samples per node"
			nodes := float64(max(r.Configs[0].Nodes, 1))
			for k := range cs[i].Rounds {
				cs[i].Rounds[k] = float64(runs[0][k].Samples) / nodes
			}
		}
		if simulated(res) {
			// On simulated networks, time is the axis that compares them.
			cs[i].XLabel, cs[i].LogX = "simulated seconds", true
			for k := range cs[i].Rounds {
				cs[i].Rounds[k] = meanOver(runs, k, func(r train.Row) float64 { return r.SimSeconds })
			}
		}
		switch {
		case robustColour != nil: // a colour per group × rule, a line style per attack
			cs[i].Colour, cs[i].Style = robustColour[i], robustStyle[i]
		case pivot: // a colour per algorithm, a line style per partition (and network)
			c := r.Configs[0]
			cs[i].Colour, cs[i].Style = slices.Index(algos, algoLabel(c)), slices.Index(parts, columnLabel(res, r))
		}
	}
	distinctLooks(cs)
	return cs
}

// look is how a curve is drawn: its colour and line style, modulo their
// sets' sizes.
type look struct{ colour, style int }

func lookOf(c curves.Curve) look { return look{c.Colour % curves.Colours(), c.Style % curves.Styles()} }

// distinctLooks gives each curve that the grid's scheme draws like an
// earlier one a look no curve has: its own colour in another line style if
// one is free, else the first free colour and style. Curves past the
// curves.Colours() × curves.Styles() looks keep theirs.
func distinctLooks(cs []curves.Curve) {
	taken := map[look]bool{}
	var clash []int
	for i, c := range cs {
		if l := lookOf(c); taken[l] {
			clash = append(clash, i)
		} else {
			taken[l] = true
		}
	}
	for _, i := range clash {
		own := lookOf(cs[i])
		for k := range curves.Colours() * curves.Styles() {
			// own colour, every style; then the next colours
			l := look{(own.colour + k/curves.Styles()) % curves.Colours(), (own.style + k) % curves.Styles()}
			if !taken[l] {
				taken[l] = true
				cs[i].Colour, cs[i].Style = l.colour, l.style
				break
			}
		}
	}
}

// looksNote returns why a grid's figure draws some curves alike, or "".
func looksNote(cs []curves.Curve) string {
	if n := curves.Colours() * curves.Styles(); len(cs) > n {
		return fmt.Sprintf("%d curves, more than the %d colour and line-style pairs: some are drawn alike (the table tells them apart)", len(cs), n)
	}
	return ""
}
