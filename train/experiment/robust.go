package experiment

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/robust"

	"github.com/gtstorm/gtstorm/train"
)

// A grid that varies the Byzantine settings (--vary byzantine, attack or
// aggregate) is a robustness study: its report adds, for each combination
// of its other settings (a group: algorithm, partition, topology, …),
// tables of the honest nodes' test accuracy and test loss with the attacks
// (and their B) as rows and the aggregation rules as columns, and its
// figure gives each group × rule a colour and each attack a line style.

// robustParts are the settings whose --vary makes a grid a robustness study.
var robustParts = []string{"byzantine", "attack", "aggregate"}

// robustGrid reports whether some cell of res varies a Byzantine setting.
func robustGrid(res []CellResult) bool {
	for _, r := range res {
		for _, p := range r.Vary {
			if p == CleanLabel || isPart(p, robustParts...) {
				return true
			}
		}
	}
	return false
}

// attackRow is a cell's row in a robustness table: "clean", or its attack
// and how many nodes make it, such as "signflip:1, B = 2".
func attackRow(c train.Config) string {
	if c.Attack == "" {
		return CleanLabel
	}
	nodes, err := robust.ParseByzantine(c.Byzantine, c.Nodes, c.Seed)
	if err != nil {
		return c.Attack + ", B " + c.Byzantine
	}
	return fmt.Sprintf("%s, B = %d", c.Attack, len(nodes))
}

// aggregateColumn is a cell's column in a robustness table: its rule.
func aggregateColumn(c train.Config) string { return cmp.Or(c.Aggregate, robust.AggMean) }

// robustGroup is a cell's group in a robustness study: its label without
// the parts for the Byzantine settings; "" where nothing else varies.
func robustGroup(r CellResult) string {
	var keep []string
	for _, p := range strings.Split(r.Label, " / ") {
		if p != CleanLabel && !isPart(p, robustParts...) {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, " / ")
}

// writeRobustPivots writes, per group, the honest nodes' test accuracy and
// test loss of x̄ as attacks × aggregation rules, mean ± std over the seeds
// that finished (a cell none of whose runs finished says how they ended).
func writeRobustPivots(b *strings.Builder, res []CellResult) {
	var groups []string
	for _, r := range res {
		groups = appendNew(groups, robustGroup(r))
	}
	for _, what := range []struct {
		name   string
		format string
		f      func(*train.Summary) float64
	}{
		{"test accuracy", "%.4f", func(s *train.Summary) float64 { return float64(s.FinalTestAcc) }},
		{"test loss", "%.4f", func(s *train.Summary) float64 { return float64(s.FinalTestLoss) }},
	} {
		for _, g := range groups {
			var rows, cols []string
			cells := map[[2]string]string{}
			for _, r := range res {
				if robustGroup(r) != g {
					continue
				}
				c := r.Configs[0]
				row, col := attackRow(c), aggregateColumn(c)
				rows, cols = appendNew(rows, row), appendNew(cols, col)
				cells[[2]string{row, col}] = pivotCell(r, what.format, what.f)
			}
			title := fmt.Sprintf("Honest nodes' %s of x̄, attack × aggregation", what.name)
			if g != "" {
				title += " (" + g + ")"
			}
			writeTable(b, title, "attack", rows, cols, cells, "–")
		}
	}
}

// robustStyles gives the curves of a robustness study a colour per group ×
// rule and a line style per attack row.
func robustStyles(res []CellResult) (colour, style []int) {
	var keys, rows []string
	colour, style = make([]int, len(res)), make([]int, len(res))
	for i, r := range res {
		c := r.Configs[0]
		key, row := robustGroup(r)+" / "+aggregateColumn(c), attackRow(c)
		keys, rows = appendNew(keys, key), appendNew(rows, row)
		colour[i], style[i] = slices.Index(keys, key), slices.Index(rows, row)
	}
	return colour, style
}
