package decentral

import (
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral/compress"
)

// New returns an optimizer for the nodes of mix, which start at x0 (copied)
// once [Optimizer.Init] is called. The batch source and the oracle give each
// node's minibatches and gradients.
func New(cfg Config, mix *graph.Mixing, s BatchSource, o Oracle, x0 []float32) (*Optimizer, error) {
	meth, err := cfg.method()
	if err != nil {
		return nil, err
	}
	desc := meth.Describe()
	if err := desc.validate(); err != nil {
		return nil, err
	}
	name := desc.Name
	sched, err := cfg.schedule(desc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkArgs(name, cfg, mix, s, o, x0); err != nil {
		return nil, err
	}
	local, err := localNodes(cfg.Local, mix.Nodes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if v, ok := meth.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	topo, err := cfg.topology(name, mix, desc)
	if err != nil {
		return nil, err
	}
	comp, err := newCompressor(desc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cfg.checkNetwork(mix.Nodes()); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	opt := newOptimizer(cfg, meth, desc, sched, topo, mix, s, o, x0, local, comp)
	opt.connect()
	if err := opt.setHooks(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := opt.checkMixing(mix); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	opt.allocSlabs()
	return opt, nil
}

// checkArgs refuses New's arguments that no method can run with.
func checkArgs(name string, cfg Config, mix *graph.Mixing, s BatchSource, o Oracle, x0 []float32) error {
	switch {
	case mix == nil:
		return fmt.Errorf("%s: no mixing matrix", name)
	case s == nil || o == nil:
		return fmt.Errorf("%s: batch source and oracle are required", name)
	case len(x0) == 0:
		return fmt.Errorf("%s: initial parameters are empty", name)
	case cfg.Workers < 0:
		return fmt.Errorf("%s: %d workers, want ≥ 0", name, cfg.Workers)
	case !(cfg.WeightDecay >= 0) || math.IsInf(cfg.WeightDecay, 0):
		return fmt.Errorf("%s: weight decay %v, want a finite λ ≥ 0", name, cfg.WeightDecay)
	case !finite(x0):
		return fmt.Errorf("%s: initial parameters are not finite", name)
	}
	return nil
}

// topology returns the run's sequence of graphs (the static mix unless
// Config.Topology says otherwise), refusing one that changes when the
// method needs a static graph.
func (cfg Config) topology(name string, mix *graph.Mixing, desc Description) (graph.Topology, error) {
	topo := cfg.Topology
	if topo == nil {
		topo = graph.Static{W: mix}
	}
	if desc.StaticGraph {
		if _, static := topo.(graph.Static); !static {
			return nil, fmt.Errorf("%s needs a static graph (it keeps Σ_j W_ij x̂_j), not one that changes every round", name)
		}
	}
	return topo, nil
}

// checkNetwork checks the simulated network, if any, against m nodes all
// run by this process.
func (cfg Config) checkNetwork(m int) error {
	if cfg.Network == nil {
		return nil
	}
	if err := cfg.Network.validate(m); err != nil {
		return err
	}
	if len(cfg.Local) != 0 {
		return fmt.Errorf("the simulated network needs every node in one process")
	}
	return nil
}

// newOptimizer returns the optimizer New checked, with its counters and
// reduction buffers; connect and allocSlabs complete it.
func newOptimizer(cfg Config, meth Method, desc Description, sched Schedule, topo graph.Topology, mix *graph.Mixing,
	s BatchSource, o Oracle, x0 []float32, local []int, comp compress.Compressor) *Optimizer {
	m, p := mix.Nodes(), len(x0)
	procs := cfg.WorkerCount(len(local))
	return &Optimizer{
		cfg: cfg, meth: meth, desc: desc, sched: sched, topo: topo, mix: mix, ex: cfg.Exchange,
		sampler: s, oracle: o, m: m, p: p, local: local, procs: procs, comp: comp,
		x0:       append([]float32(nil), x0...),
		samples:  make([]int64, m),
		evals:    make([]int64, m),
		bytes:    make([]int64, m),
		rSamples: make([]int64, m),
		rEvals:   make([]int64, m),
		rBytes:   make([]int64, m),
		loss:     make([]float64, m),
		rLoss:    make([]float64, m),
		send:     make([][][]float32, m),
		scratch:  make([][]float32, 2*procs),
		acc:      make([]float64, p),
		mean32:   make([]float32, p),
		evalL:    make([]float64, m),
		errs:     make([]error, m),
	}
}

// connect gives the optimizer its exchange (in memory unless Config.Exchange
// names one), the compressor's message buffers and the simulated clock.
func (o *Optimizer) connect() {
	if o.ex == nil {
		o.ex = NewMemExchange(o.mix.Graph())
	}
	if o.comp != nil {
		o.allocMessages()
		if ee, ok := o.ex.(EncodedExchange); ok {
			ee.SetDecoder(o.decodeMessage)
		}
	}
	if o.cfg.Network != nil {
		o.simT, o.simReady = make([]float64, o.m), make([]float64, o.m)
	}
}

// setHooks records the nodes the measures count, all but Config.Byzantine,
// and the run's Mixer, and gives a ViewingExchange its view of the shared
// vectors.
func (o *Optimizer) setHooks(cfg Config) error {
	byz := cfg.Byzantine
	if len(byz) >= o.m {
		return fmt.Errorf("%d Byzantine nodes of %d, want fewer", len(byz), o.m)
	}
	o.honest = make([]int, 0, o.m-len(byz))
	for k, i := range byz {
		if i < 0 || i >= o.m || k > 0 && i <= byz[k-1] {
			return fmt.Errorf("Byzantine nodes %v: want distinct nodes of [0, %d) in increasing order", byz, o.m)
		}
	}
	for i, next := 0, 0; i < o.m; i++ {
		if next < len(byz) && byz[next] == i {
			next++
			continue
		}
		o.honest = append(o.honest, i)
	}
	o.mixer = cfg.Mixer
	if o.mixer == nil {
		o.mixer = gossipMixer{}
	}
	vx, viewing := o.ex.(ViewingExchange)
	if o.comp != nil && (cfg.Mixer != nil || viewing) {
		return fmt.Errorf("the mixer %T and the exchange %T: robust rules and attacks on messages apply to methods that share uncompressed slabs, not %s's compressed ones", cfg.Mixer, o.ex, o.desc.Name)
	}
	if viewing {
		vx.View(o.shared)
	}
	return nil
}

// shared returns the vector k node i shares this round: its current row
// of the k-th shared slab.
func (o *Optimizer) shared(i, k int) []float32 { return o.row(o.cur[o.desc.Shared[k]], i) }

// allocSlabs allocates the method's m × p slabs, each round's send lists
// and the workers' gradient buffers; losses start as NaN (not measured).
func (o *Optimizer) allocSlabs() {
	for range o.desc.Slabs {
		o.cur = append(o.cur, make([]float32, o.m*o.p))
		o.nxt = append(o.nxt, make([]float32, o.m*o.p))
	}
	o.x = o.cur[0]
	for i := range o.send {
		o.send[i] = make([][]float32, 0, o.desc.Shares())
	}
	for w := range o.scratch {
		o.scratch[w] = make([]float32, o.p)
	}
	for i := range o.loss {
		o.loss[i] = math.NaN()
	}
}

// localNodes checks Config.Local against m nodes and returns the nodes an
// optimizer runs: those listed, or all m when the list is empty.
func localNodes(list []int, m int) ([]int, error) {
	if len(list) == 0 {
		all := make([]int, m)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	for k, i := range list {
		switch {
		case i < 0 || i >= m:
			return nil, fmt.Errorf("local node %d: want a node of [0, %d)", i, m)
		case k > 0 && i <= list[k-1]:
			return nil, fmt.Errorf("local nodes %v: want distinct nodes in increasing order", list)
		}
	}
	return append([]int(nil), list...), nil
}
