package train

import (
	"fmt"

	"github.com/gtstorm/gtstorm/data"
)

// setData loads the data of cfg, builds the model it trains, partitions the
// training set over the nodes and makes their sampler. Rank 0 of a run over
// several processes, and a run in one process, keep everything: the test
// set, the evaluation subsets and the fixed batches of ∇f(x̄). Another rank
// measures nothing and keeps only its own nodes' shares of the training set,
// in a compact copy (see data.Restrict), so the rest can be freed; its nodes
// draw the same minibatches as they would over the whole set.
func (s *setup) setData(cfg Config, part *rankPart) error {
	train, test, err := loadData(cfg)
	if err != nil {
		return err
	}
	if s.model, err = newModel(cfg, train); err != nil {
		return err
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
