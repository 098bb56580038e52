package decentral

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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

// setByzantine checks and records the run's Byzantine nodes, attack and
// aggregation rule (Config.Byzantine, Attack, Aggregate).
func (o *Optimizer) setByzantine(cfg Config) error {
	o.honest = make([]int, 0, o.m)
	if len(cfg.Byzantine) > 0 {
		if len(cfg.Byzantine) >= o.m {
			return fmt.Errorf("%d Byzantine nodes of %d, want fewer", len(cfg.Byzantine), o.m)
		}
		o.byz = make([]bool, o.m)
		for k, i := range cfg.Byzantine {
			if i < 0 || i >= o.m || k > 0 && i <= cfg.Byzantine[k-1] {
				return fmt.Errorf("Byzantine nodes %v: want distinct nodes of [0, %d) in increasing order", cfg.Byzantine, o.m)
			}
			o.byz[i] = true
		}
	}
	for i := range o.m {
		if o.byz == nil || !o.byz[i] {
			o.honest = append(o.honest, i)
		}
	}
	if err := cfg.Attack.validate(); err != nil {
		return err
	}
	switch {
	case cfg.Attack.Name != "" && o.byz == nil:
		return fmt.Errorf("attack %s with no Byzantine nodes", cfg.Attack)
	case cfg.Attack.Name == "" && o.byz != nil:
		return fmt.Errorf("Byzantine nodes %v with no attack", cfg.Byzantine)
	}
	o.attack, o.agg = cfg.Attack, cfg.Aggregate
	if isMean(o.agg) {
		o.agg = nil
	}
	if o.comp != nil && (o.attack.Lies() || o.agg != nil) {
		return fmt.Errorf("attack %q and aggregate %v: attacks on messages and robust aggregation apply to methods that share uncompressed slabs, not %s's compressed ones", o.attack, cfg.Aggregate, o.desc.Name)
	}
	if o.attack.Lies() {
		if _, ok := o.ex.(ScatterExchange); !ok {
			return fmt.Errorf("attack %s: the exchange %T cannot send each neighbour its own message", o.attack, o.ex)
		}
		o.liars = make([]liar, o.m)
		if err := o.checkOmniscient(o.mix); err != nil {
			return err
		}
	}
	if o.attack.Lies() || o.agg != nil {
		o.rob = make([]robustScratch, o.procs)
	}
	return nil
}

// Byzantine returns the nodes that lie (Config.Byzantine), nil for none.
func (o *Optimizer) Byzantine() []int {
	var out []int
	for i, b := range o.byz {
		if b {
			out = append(out, i)
		}
	}
	return out
}

// Honest returns the honest nodes in increasing order: every node of a run
// without Byzantine ones. The measures (Mean, ConsensusError, Loss,
// GradNormSq) count these only. The slice belongs to the optimizer.
func (o *Optimizer) Honest() []int { return o.honest }

// robustScratch is one worker's buffers for robust mixing and lying.
type robustScratch struct {
	Scratch
	vecs [][]float32 // what the neighbours sent
	mean []float64   // μ_j, p floats
	sq   []float64   // Σ v², p floats
	pcg  *rand.PCG
	rng  *rand.Rand
}

// robustMix is mixRow for a run with an attack on messages or a robust
// rule: node i's aggregate of shared vector k over what its neighbours
// sent, lies included (see lies.go).
func (o *Optimizer) robustMix(w int, dst []float32, i, k int, own []float32) {
	mx := o.mix
	s := &o.rob[w]
	vecs := s.vecs[:0]
	for _, j := range mx.from[i] {
		vecs = append(vecs, o.ex.Recv(i, j)[k])
	}
	s.vecs = vecs
	agg := o.agg
	if agg == nil {
		agg = Mean{}
	}
	agg.Aggregate(dst, own, mx.self32[i], mx.w32[i], s.vecs, &s.Scratch)
}
