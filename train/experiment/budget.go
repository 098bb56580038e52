package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

// Budget is a comparison's equal budget of work per node: every algorithm
// gets the most rounds whose samples per node stay within Samples, so that
// GT-STORM's two gradients a round and D-GET's large batches are paid for.
type Budget struct {
	Samples int64 // samples per node, Init's included
}

// maxBudget bounds a budget so that the sample counts derived from it
// cannot overflow an int64.
const maxBudget = 1 << 62

// ParseBudget parses `samples=N` (N may use k, M or G for 10³, 10⁶, 10⁹).
func ParseBudget(s string) (Budget, error) {
	kind, value, ok := strings.Cut(s, "=")
	if !ok || kind != "samples" {
		return Budget{}, &train.ConfigError{Flag: "budget", Value: s, Want: "samples=N, the samples per node each algorithm may draw"}
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(value, "k"):
		mult, value = 1e3, strings.TrimSuffix(value, "k")
	case strings.HasSuffix(value, "M"):
		mult, value = 1e6, strings.TrimSuffix(value, "M")
	case strings.HasSuffix(value, "G"):
		mult, value = 1e9, strings.TrimSuffix(value, "G")
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 1 || n > maxBudget/mult {
		return Budget{}, &train.ConfigError{Flag: "budget", Value: s, Want: fmt.Sprintf("samples=N with N a sample count from 1 to %d (2⁶²)", int64(maxBudget))}
	}
	return Budget{Samples: n * mult}, nil
}

// Rounds returns the rounds c's algorithm gets within the budget. A large
// batch of the whole share counts the mean share (training samples / nodes),
// which is every node's share under the iid and label partitions up to
// rounding.
func (b Budget) Rounds(c train.Config) (int, error) {
	return b.rounds(c, c.TrainSamples())
}

// rounds is Rounds for data of trainSamples training samples.
func (b Budget) rounds(c train.Config, trainSamples int) (int, error) {
	meth, err := c.Method()
	if err != nil {
		return 0, err
	}
	cost := decentral.Cost{Batch: c.Batch, Full: max(trainSamples/max(c.Nodes, 1), 1)}
	rounds, err := decentral.RoundsWithin(meth, b.Samples, cost)
	if err != nil {
		return 0, err
	}
	if rounds < 1 {
		first := decentral.SamplesAfter(meth, 1, cost)
		return 0, &train.ConfigError{Flag: "budget", Value: fmt.Sprintf("samples=%d", b.Samples),
			Want: fmt.Sprintf("at least %d samples per node, what one round of %s draws", first, c.Algo)}
	}
	return rounds, nil
}

// BudgetCells returns cells with each configuration's rounds set to what
// the budget buys its algorithm. Each data set's size is read once.
func BudgetCells(cells []Cell, b Budget) ([]Cell, error) {
	out := make([]Cell, len(cells))
	sizes := map[[2]string]int{} // dataset and folder → training samples
	for i, cell := range cells {
		cell.Configs = append([]train.Config(nil), cell.Configs...)
		for k, c := range cell.Configs {
			key := [2]string{c.Dataset, c.DataDir}
			n, ok := sizes[key]
			if !ok {
				n = c.TrainSamples()
				sizes[key] = n
			}
			r, err := b.rounds(c, n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cell.Label, err)
			}
			cell.Configs[k].Iters = r
		}
		out[i] = cell
	}
	return out, nil
}
