package train

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/robust"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
)

// Byzantine nodes and robust aggregation (SPEC §11): the settings'
// checks, what they make of a run, and the poisoned data of labelflip.

// byzantineSettings returns the settings table's entries for --byzantine,
// --attack and --aggregate.
func byzantineSettings() []Setting {
	return []Setting{
		{Name: "byzantine", Usage: "Byzantine nodes: a count B < --nodes drawn from the seed (recorded in summary.json), or a comma list of node ids (5, for node 5 alone); 0: none", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Byzantine) },
			want: func(c Config) string {
				nodes, err := robust.ParseByzantine(c.Byzantine, c.Nodes, c.Seed)
				switch {
				case err != nil:
					return fmt.Sprintf("a count B with 0 ≤ B < --nodes %d, or a comma list of fewer distinct node ids of [0, %d) (5, for node 5 alone)", c.Nodes, c.Nodes)
				case len(nodes) > 0 && c.Attack == "":
					return "0 without an --attack: Byzantine nodes need one"
				}
				return ""
			}},
		{Name: "attack", Usage: "what the Byzantine nodes do: " + robust.AttackKinds + " (alie, ipm and dissensus read the honest vectors their target receives); none: no attack", Sweepable: true,
			field: func(c *Config) flag.Value { return (*attackValue)(&c.Attack) },
			want: func(c Config) string {
				a, err := robust.ParseAttack(c.Attack)
				if err != nil {
					return robust.AttackKinds + ", parameters finite and ≥ 0"
				}
				nodes, _ := robust.ParseByzantine(c.Byzantine, c.Nodes, c.Seed)
				switch {
				case a.Name != "" && len(nodes) == 0:
					return "no attack without --byzantine nodes"
				case a.Lies() && decentral.CompressesMessages(c.Algo):
					return robust.AttackLabelFlip + " with --algo " + c.Algo + ", whose compressed messages take no attack on messages"
				}
				return ""
			}},
		{Name: "aggregate", Usage: "how a node combines the vectors of a slab it mixes: " + robust.AggregateKinds + " (mean: plain gossip; clip without τ: the adaptive radius, see docs/byzantine.md)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Aggregate) },
			want: func(c Config) string {
				a, err := robust.ParseAggregate(c.Aggregate)
				switch {
				case err != nil:
					return robust.AggregateKinds + " with τ > 0 and b ≥ 0"
				case a.String() != robust.AggMean && decentral.CompressesMessages(c.Algo):
					return "mean with --algo " + c.Algo + ", whose compressed messages take no robust rule"
				}
				return ""
			}},
	}
}

// robustSetting returns the Byzantine nodes, attack and aggregation rule
// of c, whose settings are valid.
func (c Config) robustSetting() (s robust.Setting, err error) {
	if s.Byzantine, err = robust.ParseByzantine(c.Byzantine, c.Nodes, c.Seed); err != nil {
		return s, &ConfigError{"byzantine", c.Byzantine, err.Error()}
	}
	if s.Attack, err = robust.ParseAttack(c.Attack); err != nil {
		return s, &ConfigError{"attack", c.Attack, err.Error()}
	}
	if s.Aggregate, err = robust.ParseAggregate(c.Aggregate); err != nil {
		return s, &ConfigError{"aggregate", c.Aggregate, err.Error()}
	}
	return s, nil
}

// hasByzantine reports whether c has Byzantine nodes or a rule other than
// plain gossip.
func (c Config) hasByzantine() bool {
	return c.Attack != "" || c.Aggregate != "" && c.Aggregate != robust.AggMean
}

// The checks before round 1 visit each distinct W_t a run mixes with, not
// each round: one matrix for a static graph and one period of the one-peer
// exponential graph, whatever --iters is. A graph whose links fail has a new
// W_t every round; its checks build at most maxCheckedRounds of them, and
// fewer on a large graph (maxCheckedEdges edges over all the rounds built),
// so that they end in moments however large --iters is. Its later rounds are
// checked as the run reaches them: the optimizer refuses a W_t its rule or
// algorithm cannot use, naming the round.
const (
	maxCheckedRounds = 1000
	maxCheckedEdges  = 1 << 24
)

// checkedRounds returns how many of the first iters rounds of topo the
// checks before round 1 visit, and whether that leaves rounds unchecked:
// 1 for a static graph, at most one period of a periodic one (exp), and
// for one that changes every round (--link-drop) the bound above.
func checkedRounds(topo graph.Topology, iters int) (rounds int, partial bool) {
	iters = max(iters, 1)
	switch tp := topo.(type) {
	case graph.Static:
		return 1, false
	case interface{ Period() int }:
		return min(iters, max(tp.Period(), 1)), false
	case *graph.LinkDrop:
		rounds = min(maxCheckedRounds, max(1, maxCheckedEdges/max(len(tp.Base().Edges), 1)))
	default:
		rounds = maxCheckedRounds
	}
	return min(iters, rounds), iters > rounds
}

// errNoMixing is a round whose mixing matrix could not be built.
var errNoMixing = errors.New("the topology gave no mixing matrix")

// eachMixing calls f with each distinct W_t of the rounds of topo that
// checkedRounds names, in order, and returns its first error, prefixed by
// the round (counted from 1) unless topo is static.
func eachMixing(topo graph.Topology, iters int, f func(*graph.Mixing) error) error {
	rounds, _ := checkedRounds(topo, iters)
	var last *graph.Mixing
	for t := range rounds {
		mx := topo.Mixing(t)
		if mx == last {
			continue
		}
		err := errNoMixing
		if mx != nil {
			err = f(mx)
		}
		if err != nil {
			if _, static := topo.(graph.Static); !static {
				err = fmt.Errorf("round %d: %w", t+1, err)
			}
			return err
		}
		last = mx
	}
	return nil
}

// checkAggregate refuses a rule that needs more neighbours than some node
// of some round's graph has (trim:b needs 2b < degree + 1), naming the
// node and the round. Plain gossip (mean) needs nothing and visits no
// round; the rounds of a graph whose links fail are visited up to the
// bound of checkedRounds.
func (c Config) checkAggregate(topo graph.Topology) error {
	s, err := c.robustSetting()
	if err != nil {
		return err
	}
	agg := s.Aggregate
	if agg.String() == robust.AggMean {
		return nil
	}
	if err := eachMixing(topo, c.Iters, agg.Check); err != nil {
		return &ConfigError{"aggregate", c.Aggregate, fmt.Sprintf("a rule every node's neighbourhood allows: %v", err)}
	}
	return nil
}

// CheckPlacement refuses a run over ranks, node i on rank owner[i], whose
// omniscient attack has a Byzantine node lie, in some round's graph, to a
// node that its rank does not run with all its honest neighbours (see
// robust.CheckPlacement): every rank refuses it, before the first round.
// The rounds of a graph whose links fail are visited up to the bound of
// checkedRounds; each rank's optimizer checks the later ones as it reaches
// them.
func (c Config) CheckPlacement(owner []int) error {
	s, err := c.robustSetting()
	if err != nil || !s.Attack.Omniscient() || len(s.Byzantine) == 0 {
		return err
	}
	topo, _, err := newTopology(c)
	if err != nil {
		return err
	}
	return eachMixing(topo, c.Iters, func(mx *graph.Mixing) error {
		return robust.CheckPlacement(mx, s.Byzantine, s.Attack, owner)
	})
}

// flipLabels returns d with every label y replaced by C − 1 − y: the
// poisoned data of a labelflip node (9 − y for 10 classes, 1 − y for a
// binary task). The samples are shared with d.
func flipLabels(d *data.Dataset) *data.Dataset {
	f := *d
	f.Labels = make([]uint8, len(d.Labels))
	top := uint8(d.Classes - 1)
	for i, y := range d.Labels {
		f.Labels[i] = top - y
	}
	return &f
}

// honestBatches returns the batches of the honest nodes among batches, one
// per node.
func honestBatches(batches []decentral.Batch, honest []int) []decentral.Batch {
	if len(honest) == len(batches) {
		return batches
	}
	out := make([]decentral.Batch, len(honest))
	for k, i := range honest {
		out[k] = batches[i]
	}
	return out
}

// measuredNodes describes, for summary.json, the nodes the measures count
// when some are Byzantine, else "".
func measuredNodes(byz []int, m int) string {
	if len(byz) == 0 {
		return ""
	}
	ids := make([]string, len(byz))
	for k, i := range byz {
		ids[k] = fmt.Sprint(i)
	}
	return fmt.Sprintf("the %d honest nodes of %d (Byzantine: %s)", m-len(byz), m, strings.Join(ids, ", "))
}
