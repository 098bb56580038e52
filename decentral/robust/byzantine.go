package robust

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/graph"
)

// byzantineStream separates the draw of the Byzantine nodes from the
// seed's other streams.
const byzantineStream = 0x62797a616e74696e // "byzantin"

// ChooseByzantine returns b of the m nodes, in increasing order, drawn
// without replacement from a stream of seed: the same seed gives the same
// nodes, and the run records them.
func ChooseByzantine(m, b int, seed uint64) ([]int, error) {
	if b < 0 || b >= m {
		return nil, fmt.Errorf("%d Byzantine nodes of %d, want 0 to %d", b, m, m-1)
	}
	if b == 0 {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(seed, byzantineStream))
	perm := make([]int, m)
	for i := range perm {
		perm[i] = i
	}
	for k := range b {
		j := k + rng.IntN(m-k)
		perm[k], perm[j] = perm[j], perm[k]
	}
	out := perm[:b:b]
	slices.Sort(out)
	return out, nil
}

// ParseByzantine returns the Byzantine nodes spec names among m: a count B
// ("2"), drawn from seed by [ChooseByzantine], or a comma list of node ids
// ("3,7"; "5," for node 5 alone). Empty and "0" are none. Fewer than m
// nodes may lie.
func ParseByzantine(spec string, m int, seed uint64) ([]int, error) {
	if spec == "" {
		return nil, nil
	}
	if !strings.Contains(spec, ",") {
		b, err := strconv.Atoi(spec)
		if err != nil || b < 0 {
			return nil, fmt.Errorf("byzantine %q: want a count B ≥ 0 or a comma list of node ids", spec)
		}
		return ChooseByzantine(m, b, seed)
	}
	var ids []int
	for _, f := range strings.Split(strings.TrimSuffix(spec, ","), ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= m {
			return nil, fmt.Errorf("byzantine %q: node %q, want ids of [0, %d)", spec, f, m)
		}
		if slices.Contains(ids, i) {
			return nil, fmt.Errorf("byzantine %q: node %d listed twice", spec, i)
		}
		ids = append(ids, i)
	}
	if len(ids) >= m {
		return nil, fmt.Errorf("byzantine %q: %d Byzantine nodes of %d, want fewer", spec, len(ids), m)
	}
	slices.Sort(ids)
	return ids, nil
}

// Setting is what a run's Byzantine nodes do and how the honest ones mix.
type Setting struct {
	// Byzantine lists the nodes that lie, distinct and in increasing order
	// (see [ParseByzantine]), fewer than m; Attack says how, and must be
	// set exactly when Byzantine is not empty. A labelflip attack changes
	// no message: the batch source gives the Byzantine nodes their
	// poisoned data.
	Byzantine []int
	Attack    Attack
	// Aggregate replaces plain gossip Σ_j W_ij v_j for every slab the
	// method mixes; nil is plain gossip ([Mean]). A method that sends
	// compressed messages (CHOCO) takes neither a robust rule nor an
	// attack on messages.
	Aggregate Aggregator
}

// Apply returns cfg set up to run s on the graph of W_0 = mix: its
// Byzantine nodes, which the measures leave out (decentral.Config.Byzantine),
// the rule's [decentral.Mixer] unless it is plain gossip, and, for an
// attack on messages, an exchange that tells the lies around cfg.Exchange
// (a [decentral.MemExchange] on mix's graph when nil), which must be a
// [decentral.ScatterExchange]. Call it once cfg's Exchange, Local and Seed
// are set; [decentral.New] checks the rest. The hooks serve one optimizer.
func Apply(cfg decentral.Config, mix *graph.Mixing, s Setting) (decentral.Config, error) {
	a := s.Attack
	if err := a.validate(); err != nil {
		return cfg, err
	}
	switch {
	case a.Name != "" && len(s.Byzantine) == 0:
		return cfg, fmt.Errorf("attack %s with no Byzantine nodes", a)
	case a.Name == "" && len(s.Byzantine) > 0:
		return cfg, fmt.Errorf("Byzantine nodes %v with no attack", s.Byzantine)
	}
	cfg.Byzantine = s.Byzantine
	if !isMean(s.Aggregate) {
		cfg.Mixer = &mixer{agg: s.Aggregate}
	}
	if !a.Lies() {
		return cfg, nil
	}
	ex := cfg.Exchange
	if ex == nil {
		ex = decentral.NewMemExchange(mix.Graph())
	}
	sx, ok := ex.(decentral.ScatterExchange)
	if !ok {
		return cfg, fmt.Errorf("attack %s: the exchange %T cannot send each neighbour its own message", a, ex)
	}
	cfg.Exchange = newLiar(sx, a, cfg.Seed, s.Byzantine, cfg.Local, mix.Nodes())
	return cfg, nil
}
