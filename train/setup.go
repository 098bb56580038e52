package train

import (
	"fmt"
	"math/rand/v2"
	"slices"

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
	mix         *decentral.Mixing
	opt         *decentral.Optimizer
	gradBatches []decentral.Batch // fixed per-node training subsets for ∇f(x̄)
}

// evalChunk is the number of samples evaluated per forward pass of a test set.
const evalChunk = 250

// newSetup loads the data and builds the model, topology and optimizer of
// cfg, which must be valid. The optimizer is neither initialised nor restored.
func newSetup(cfg Config) (*setup, error) {
	if err := cfg.CheckMemory(); err != nil {
		return nil, err // a *MemoryError, before anything large is allocated
	}
	return buildSetup(cfg)
}

// buildSetup is newSetup for a cfg whose memory was checked already.
func buildSetup(cfg Config) (*setup, error) {
	s := &setup{cfg: cfg}
	var err error
	if s.train, s.test, err = loadData(cfg); err != nil {
		return nil, err
	}
	s.evalSet = s.test
	if s.evalSet == nil {
		s.evalSet = s.train
	}
	s.localSet = s.evalSet.Head(cfg.LocalEvalSamples)

	if s.model, err = newModel(cfg, s.train); err != nil {
		return nil, err
	}
	spec, err := data.ParsePartition(cfg.Partition)
	if err != nil {
		return nil, &ConfigError{"partition", cfg.Partition, data.PartitionKinds}
	}
	if s.part, err = spec.Apply(s.train, cfg.Nodes, cfg.Seed); err != nil {
		return nil, err // names the partition, the data and the node count
	}
	if s.sampler, err = data.NewSampler(s.train, s.part, cfg.Batch, cfg.Seed); err != nil {
		return nil, err
	}
	s.gradBatches = fixedSubsets(s.train, s.part, cfg.GradSamples, cfg.Seed)

	g, err := decentral.NewTopology(cfg.Topology, cfg.Nodes, cfg.PC, cfg.Seed)
	if err != nil {
		return nil, err // names the topology or its file
	}
	if s.mix, err = decentral.NewMixing(cfg.Mixing, g); err != nil {
		return nil, err
	}

	dc := decentral.Config{
		Algorithm: cfg.Algo,
		Eta0:      cfg.Eta0,
		Rho:       cfg.Rho,
		CubeRoot:  cfg.CubeRoot,
		Workers:   cfg.Workers,
	}
	// One model worker per optimizer worker id.
	if s.pool, err = models.NewPool(s.model, dc.WorkerCount(cfg.Nodes)); err != nil {
		return nil, err
	}
	x0 := s.model.Init(cfg.Seed)
	if s.opt, err = decentral.New(dc, s.mix, sampler{s.sampler}, oracle{s.pool}, x0); err != nil {
		return nil, err
	}
	return s, nil
}

// loadData loads the training and test sets of cfg.Dataset; data's errors
// name the file and the fault.
func loadData(cfg Config) (train, test *data.Dataset, err error) {
	return data.LoadWith(cfg.Dataset, cfg.DataDir, data.LoadOptions{Features: cfg.Features, Normalize: cfg.Normalize})
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
		out[i] = &data.Batch{Data: d, Index: idx}
	}
	return out
}

// sampler adapts data.Sampler to decentral.BatchSource: batches travel as
// *data.Batch, a decentral.Batch that costs no allocation in an interface.
type sampler struct{ s *data.Sampler }

func (s sampler) Sample(node int) decentral.Batch { return s.s.SampleRef(node) }

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
