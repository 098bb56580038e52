package train

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/weights"
)

// meta is what a resume checkpoint carries besides the optimizer and sampler
// state: the run's configuration, its metrics rows so far (in metrics.csv's
// exact-float form) and the wall time spent.
type meta struct {
	Config  Config  `json:"config"`
	Metrics string  `json:"metrics"`
	Seconds float64 `json:"seconds"`
}

// checkpoint writes the resume state of the last completed round.
func (r *runner) checkpoint() error {
	s := r.s
	snap, err := s.opt.State()
	if err != nil {
		return err
	}
	smp, err := s.sampler.MarshalBinary()
	if err != nil {
		return err
	}
	m, err := json.Marshal(meta{Config: s.cfg, Metrics: string(csvBytes(r.rows)), Seconds: r.seconds()})
	if err != nil {
		return err
	}
	s.opt.Mean(r.xbar)
	ck := modelCheckpoint(s.model, r.xbar)
	ck.Optimizer, ck.Sampler, ck.Meta = snap, smp, m
	if err := weights.Write(filepath.Join(r.out, CheckpointFile), ck); err != nil {
		return err
	}
	r.lastCkp = s.opt.Round()
	return nil
}

// writeModel writes the final averaged model alone, for `gtstorm eval`.
func (r *runner) writeModel() error {
	r.s.opt.Mean(r.xbar)
	ck := modelCheckpoint(r.s.model, r.xbar)
	m, err := json.Marshal(meta{Config: r.s.cfg})
	if err != nil {
		return err
	}
	ck.Meta = m
	return weights.Write(filepath.Join(r.out, ModelFile), ck)
}

// modelCheckpoint returns a checkpoint of params with m's layout.
func modelCheckpoint(m models.Model, params []float32) *weights.Checkpoint {
	ck := &weights.Checkpoint{Model: m.Name(), Params: params}
	for _, p := range m.Params() {
		ck.Tensors = append(ck.Tensors, weights.Tensor{Name: p.Name, Shape: p.Shape})
	}
	return ck
}

// resumeState is a parsed resume checkpoint.
type resumeState struct {
	ck   *weights.Checkpoint
	snap *decentral.Snapshot
	meta meta
	rows []Row
}

// readCheckpoint reads a checkpoint written by runner.checkpoint.
func readCheckpoint(path string) (*resumeState, error) {
	ck, err := weights.Read(path)
	if err != nil {
		return nil, err
	}
	if ck.Optimizer == nil {
		return nil, fmt.Errorf("%s: a model-only checkpoint, without the optimizer state a resume needs", path)
	}
	st := &resumeState{ck: ck, snap: ck.Optimizer}
	if err := json.Unmarshal(ck.Meta, &st.meta); err != nil {
		return nil, fmt.Errorf("%s: run metadata: %w", path, err)
	}
	if st.rows, err = ReadCSV(strings.NewReader(st.meta.Metrics)); err != nil {
		return nil, fmt.Errorf("%s: metrics: %w", path, err)
	}
	return st, nil
}

// restore puts the runner in the checkpointed state.
func (r *runner) restore(st *resumeState) error {
	s := r.s
	if st.ck.Model != s.model.Name() || len(st.ck.Params) != s.model.NumParams() {
		return fmt.Errorf("checkpoint of %s with %d parameters, the configuration builds %s with %d",
			st.ck.Model, len(st.ck.Params), s.model.Name(), s.model.NumParams())
	}
	if err := s.opt.Restore(st.snap); err != nil {
		return err
	}
	if err := s.sampler.UnmarshalBinary(st.ck.Sampler); err != nil {
		return err
	}
	r.rows = st.rows
	r.prior = st.meta.Seconds
	r.lastCkp = st.snap.Round
	return nil
}
