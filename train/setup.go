package train

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gtstorm/gtstorm/decentral/robust"
	"github.com/gtstorm/gtstorm/internal/splitmix"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/models"
)

// setup is everything a run is built from: data, model, partition, graph and
// optimizer. Building it twice from the same Config gives the same run.
type setup struct {
	cfg         Config
	train, test *data.Dataset
	evalSet     *data.Dataset // test set, or the training set when there is none
	localSet    *data.Dataset // head of evalSet for the local models' accuracy
	model       models.Model
	pool        *models.Pool
	part        *data.Partition
	sampler     *data.Sampler
	augment     *data.Augment  // the training batches' augmentation; nil for none
	topo        graph.Topology // each round's W_t
	mix         *graph.Mixing  // W_0: the static graph's W, or round 0's
	opt         *decentral.Optimizer
	gradBatches []decentral.Batch // fixed per-node training subsets for ∇f(x̄)
	compute     float64           // seconds per gradient of the simulated network; 0 for none
}

// EvalChunk is the number of samples evaluated per forward pass of a test set.
const EvalChunk = 250

// newSetup loads the data and builds the model, topology and optimizer of
// cfg, which must be valid. The optimizer is neither initialised nor restored.
func newSetup(cfg Config) (*setup, error) {
	if err := cfg.CheckMemory(); err != nil {
		return nil, err // a *MemoryError, before anything large is allocated
	}
	return buildSetup(cfg, nil, 0)
}

// rankPart is the part of a run one process (a rank) runs: its nodes and
// the exchange that reaches the others.
type rankPart struct {
	local []int
	ex    decentral.Exchange
	// measures marks rank 0, which evaluates the whole run and so keeps
	// the whole data; another rank keeps its nodes' shares only.
	measures bool
}

// buildSetup is newSetup for a cfg whose memory was checked already; part,
// if not nil, restricts the optimizer to one rank's nodes. compute is the
// gradient time a simulated network uses when cfg.Compute is 0 (a resumed
// run's measured one); 0 measures it.
func buildSetup(cfg Config, part *rankPart, compute float64) (*setup, error) {
	s := &setup{cfg: cfg}
	err := s.setData(cfg, part)
	if err != nil {
		return nil, err
	}
	meth, err := cfg.Method()
	if err != nil {
		return nil, err
	}
	if err := checkShareBatch(meth, s.part); err != nil {
		return nil, err
	}

	if s.topo, s.mix, err = newTopology(cfg); err != nil {
		return nil, err
	}

	rs, err := cfg.robustSetting()
	if err != nil {
		return nil, err
	}
	dc := decentral.Config{
		Method:      meth,
		StepSizes:   cfg.StepSizes,
		Rounds:      cfg.Iters,
		WeightDecay: cfg.WeightDecay,
		Workers:     cfg.Workers,
		Topology:    s.topo,
		Seed:        cfg.Seed,
	}
	nodes := cfg.Nodes
	if part != nil {
		dc.Local, dc.Exchange, nodes = part.local, part.ex, len(part.local)
	}
	// The Byzantine nodes' lies and the robust rule plug into the optimizer.
	if dc, err = robust.Apply(dc, s.mix, rs); err != nil {
		return nil, err
	}
	// One model worker per optimizer worker id.
	if s.pool, err = models.NewPool(s.model, dc.WorkerCount(nodes)); err != nil {
		return nil, err
	}
	x0, err := initialParams(cfg, s.model)
	if err != nil {
		return nil, err
	}
	if cfg.SimulatesNetwork() {
		s.compute = cmp.Or(cfg.Compute, compute)
		if s.compute == 0 {
			if s.compute, err = measureCompute(s.pool, s.train, cfg.Batch, x0); err != nil {
				return nil, err
			}
		}
		if dc.Network, err = cfg.network(s.compute); err != nil {
			return nil, err
		}
	}
	smp := newSampler(s.sampler)
	smp.augment = s.augment
	if rs.Attack.Name == robust.AttackLabelFlip {
		smp.poison(rs.Byzantine, flipLabels(s.train))
	}
	if s.opt, err = decentral.New(dc, s.mix, smp, oracle{s.pool}, x0); err != nil {
		return nil, err
	}
	if s.gradBatches != nil {
		s.gradBatches = honestBatches(s.gradBatches, s.opt.Honest())
	}
	return s, nil
}

// Method returns the method c runs, which the registry makes from c's
// algorithm and its typed knobs (D-GET's period, CHOCO's gamma).
func (c Config) Method() (decentral.Method, error) {
	return decentral.NewMethod(c.Algo, c.Knobs)
}

// checkShareBatch refuses a batch drawn from a node's share (D-GET's large
// batch, see decentral.ShareBatcher) larger than the smallest share p
// holds: it would draw the same samples over and over.
func checkShareBatch(m decentral.Method, p *data.Partition) error {
	sb, ok := m.(decentral.ShareBatcher)
	if !ok {
		return nil
	}
	knob, size := sb.ShareBatch()
	if size == 0 {
		return nil
	}
	smallest, node := -1, 0
	for i, share := range p.Nodes {
		if p.Holds(i) && (smallest < 0 || len(share) < smallest) {
			smallest, node = len(share), i
		}
	}
	if smallest >= 0 && size > smallest {
		return &ConfigError{knob.Name, size, fmt.Sprintf("at most %d samples, node %d's share (0: each node's whole share)", smallest, node)}
	}
	return nil
}

// CheckGraphs refuses a run whose algorithm cannot use one of the W_t its
// rounds mix with (D² needs λ_min(W_t) > −1/3, which Metropolis weights on
// a graph whose links fail can break at any round): W_t depends only on the
// seed and t, so this is known before round 0.
func (c Config) CheckGraphs() error {
	topo, _, err := newTopology(c)
	if err != nil {
		return err
	}
	if err := c.checkAggregate(topo); err != nil {
		return err
	}
	rounds, partial := checkedRounds(topo, c.Iters)
	if err := decentral.CheckTopology(c.Algo, topo, rounds); err != nil {
		want := fmt.Sprintf("graphs --algo %s can use in all %d rounds: %v", c.Algo, c.Iters, err)
		if partial {
			want = fmt.Sprintf("graphs --algo %s can use in its first %d rounds, checked before round 1: %v", c.Algo, rounds, err)
		}
		if c.LinkDrop > 0 {
			return &ConfigError{"link-drop", c.LinkDrop, want}
		}
		return &ConfigError{"mixing", c.Mixing, want}
	}
	return nil
}

// newTopology returns the topology of cfg and its first mixing matrix: a
// static graph's W every round, the one-peer exponential graph's W_t, or a
// static graph's edges failing at random each round (--link-drop), whose
// W_t are Metropolis–Hastings matrices.
func newTopology(cfg Config) (graph.Topology, *graph.Mixing, error) {
	if cfg.Topology == graph.ExpTopology {
		e, err := graph.OnePeerExponential(cfg.Nodes)
		if err != nil {
			return nil, nil, err
		}
		return e, e.Mixing(0), nil
	}
	g, err := graph.Generate(cfg.Topology, cfg.Nodes, cfg.PC, cfg.Seed)
	if err != nil {
		return nil, nil, err // names the topology or its file
	}
	if cfg.LinkDrop > 0 {
		l, err := graph.NewLinkDrop(g, cfg.Mixing, cfg.LinkDrop, cfg.Seed)
		if err != nil {
			return nil, nil, err
		}
		return l, l.Mixing(0), nil
	}
	mix, err := graph.NewMixing(cfg.Mixing, g)
	if err != nil {
		return nil, nil, err
	}
	return graph.Static{W: mix}, mix, nil
}

// lambda returns the λ a run reports and what it is: W's for a static
// graph, else the time-varying topology's summary over the run's rounds.
func (s *setup) lambda() (float64, string) {
	tv, ok := s.topo.(graph.TimeVarying)
	if !ok {
		return s.mix.Lambda(), ""
	}
	lam, err := tv.Lambda(s.cfg.Iters)
	if err != nil {
		return math.NaN(), err.Error()
	}
	return lam, tv.LambdaMeaning(s.cfg.Iters)
}

// LoadData loads the training and test sets of cfg.Dataset; data's errors
// name the file and the fault.
func LoadData(cfg Config) (train, test *data.Dataset, err error) {
	return cfg.registry().LoadWith(cfg.Dataset, cfg.DataDir, cfg.loadOptions())
}

// fixedSubsets returns, for each node, the batch on which the global
// gradient at x̄ is measured: n samples of the node's share drawn without
// replacement from a stream seeded by seed (the whole share if n is 0 or
// larger). The same seed gives the same subsets.
func fixedSubsets(d *data.Dataset, p *data.Partition, n int, seed uint64) []decentral.Batch {
	rng := rand.New(rand.NewPCG(seed, 0x67726164)) // "grad"
	out := make([]decentral.Batch, p.Len())
	for i, share := range p.Nodes {
		idx := slices.Clone(share)
		if n > 0 && n < len(idx) {
			for k := range n {
				j := k + rng.IntN(len(idx)-k)
				idx[k], idx[j] = idx[j], idx[k]
			}
			idx = idx[:n]
			slices.Sort(idx)
		}
		// A fixed draw key per node: a network with dropout is measured
		// with the same masks at every measurement.
		out[i] = &data.Batch{Data: d, Index: idx, Draw: (seed ^ (uint64(i)+1)*splitmix.Gamma) | 1}
	}
	return out
}

// sampler adapts data.Sampler to decentral.FullBatcher: batches travel as
// *data.Batch, a decentral.Batch that costs no allocation in an interface.
// Large batches come in pieces of at most the minibatch size, whose graphs
// the model workers have built already (the last piece may be smaller).
type sampler struct {
	s     *data.Sampler
	nodes []fullBatches   // per node, reused
	data  []*data.Dataset // per node: its batches' data, poisoned for a labelflip node
	// augment is the training batches' augmentation (--augment); nil for none.
	augment *data.Augment
}

// fullBatches is one node's large batch: its drawn indices and its pieces.
type fullBatches struct {
	index  []int
	pieces []data.Batch
	refs   []decentral.Batch
}

func newSampler(s *data.Sampler) *sampler {
	d := make([]*data.Dataset, s.Nodes())
	for i := range d {
		d[i] = s.Data()
	}
	return &sampler{s: s, nodes: make([]fullBatches, s.Nodes()), data: d}
}

// poison gives the nodes listed the dataset bad in place of the
// training set: the same samples, their labels flipped.
func (s *sampler) poison(nodes []int, bad *data.Dataset) {
	for _, i := range nodes {
		s.data[i] = bad
	}
}

func (s *sampler) Sample(node int) decentral.Batch {
	b := s.s.SampleRef(node)
	b.Data, b.Augment = s.data[node], s.augment
	return b
}

// FullBatch returns node's whole share (n = 0) or n samples drawn from it
// with replacement, from the node's stream, in pieces.
func (s *sampler) FullBatch(node, n int) []decentral.Batch {
	f := &s.nodes[node]
	index := s.s.Share(node)
	if n > 0 {
		if cap(f.index) < n {
			f.index = make([]int, n)
		}
		f.index = f.index[:n]
		s.s.Draw(node, f.index)
		index = f.index
	}
	size := s.s.BatchSize()
	f.pieces, f.refs = f.pieces[:0], f.refs[:0]
	d := s.data[node]
	for lo := 0; lo < len(index); lo += size {
		piece := data.Batch{Data: d, Index: index[lo:min(lo+size, len(index))], Augment: s.augment}
		if s.s.Keyed() {
			piece.Draw = s.s.DrawKey(node) // after the indices: each piece a draw of its own
		}
		f.pieces = append(f.pieces, piece)
	}
	for k := range f.pieces {
		f.refs = append(f.refs, &f.pieces[k])
	}
	return f.refs
}

// oracle adapts a model pool to decentral.Oracle.
type oracle struct{ pool *models.Pool }

func (o oracle) Grad(worker int, x []float32, b decentral.Batch, grad []float32) (float32, error) {
	batch, ok := b.(*data.Batch)
	if !ok {
		return 0, fmt.Errorf("oracle: batch of type %T, want *data.Batch", b)
	}
	return o.pool.Grad(worker, x, *batch, grad)
}

// GradPair makes oracle a decentral.PairGrader, which lets GT-STORM share a
// batch's loading between its two gradients.
func (o oracle) GradPair(worker int, xNew, xOld []float32, b decentral.Batch, gNew, gOld []float32) (float32, error) {
	batch, ok := b.(*data.Batch)
	if !ok {
		return 0, fmt.Errorf("oracle: batch of type %T, want *data.Batch", b)
	}
	loss, _, err := o.pool.GradPair(worker, xNew, xOld, *batch, gNew, gOld)
	return loss, err
}

// setData loads the data of cfg, builds the model it trains, partitions the
// training set over the nodes and makes their sampler. Rank 0 of a run over
// several processes, and a run in one process, keep everything: the test
// set, the evaluation subsets and the fixed batches of ∇f(x̄). Another rank
// measures nothing and keeps only its own nodes' shares of the training set,
// in a compact copy (see data.Restrict), so the rest can be freed; its nodes
// draw the same minibatches as they would over the whole set.
func (s *setup) setData(cfg Config, part *rankPart) error {
	train, test, err := LoadData(cfg)
	if err != nil {
		return err
	}
	if s.model, err = NewModel(cfg, train); err != nil {
		return err
	}
	if s.augment, err = trainAugment(cfg, train); err != nil {
		return err // before the partition: the data decide
	}
	spec, err := data.ParsePartition(cfg.Partition)
	if err != nil {
		return &ConfigError{"partition", cfg.Partition, data.PartitionKinds}
	}
	p, err := spec.Apply(train, cfg.Nodes, cfg.Seed)
	if err != nil {
		return err // names the partition, the data and the node count
	}
	if part != nil && !part.measures {
		// The partition needs every label; the nodes of this rank need their
		// samples only.
		if train, p, err = data.Restrict(train, p, part.local); err != nil {
			return fmt.Errorf("keep this rank's data: %w", err)
		}
	}
	s.train, s.part = train, p
	if s.sampler, err = data.NewSampler(train, p, cfg.Batch, cfg.Seed); err != nil {
		return err
	}
	if s.augment != nil || models.Stochastic(s.model) {
		// The crops and flips of a batch, and its dropout masks, derive
		// from its key.
		s.sampler.KeyDraws()
	}
	if part != nil && !part.measures {
		return nil
	}
	s.test, s.evalSet = test, test
	if s.evalSet == nil {
		s.evalSet = train
	}
	s.localSet = s.evalSet.Head(cfg.LocalEvalSamples)
	s.gradBatches = fixedSubsets(train, p, cfg.GradSamples, cfg.Seed)
	return nil
}
