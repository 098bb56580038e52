package train

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/gtstorm/gtstorm/decentral"
)

// plan is a run ready to execute: its settings and inputs, and the
// checkpoint it resumes from (nil for a fresh run). The folder is locked
// and config.json written by whoever built it.
type plan struct {
	cfg    Config
	inputs []InputFile
	ck     *resumeState // nil: start from round 0
	ckPath string       // where ck was read
	// rewrite writes a checkpoint as soon as the run is restored: the
	// settings changed (a resume to another round count), and the
	// checkpoint must agree with config.json.
	rewrite bool
	// measured, where ≥ 0, is the last round every rank measured, which a
	// resumed rank's metrics cannot tell (see ResumeRank).
	measured int
}

// role is what differs between a run in one process (processRole) and one
// rank of a run over several (rankRole): how a row is recorded, where
// checkpoints go and what they record, and how the run ends.
type role interface {
	// part returns the rank's part of the run: nil for every node here.
	part() *rankPart
	// measures reports whether this process evaluates the run and writes
	// its metrics, summary, curve and model.
	measures() bool
	// initContext returns the context the optimizer initialises under.
	initContext(ctx context.Context) context.Context
	// announce writes notes on a fresh run to w (not nil).
	announce(w io.Writer, s *setup)
	// collect readies the evaluation of opt's current round; false when
	// this process records no row of it.
	collect(ctx context.Context, opt *decentral.Optimizer, progress io.Writer) (bool, error)
	// placement is what a checkpoint records of where it was written.
	placement() *RankPlacement
	// kept is called once the checkpoint of round t is written in dir.
	kept(dir string, t int) error
	// lost handles the failure err of r other than a divergence; it
	// returns the error to report, or nil for the common handling.
	lost(r *runner, err error) error
	// waitPerRound is the summary's network wait per round of rounds.
	waitPerRound(rounds int) Num
	// kernels names the compute kernel sets that ran the run's models.
	kernels() string
}

// execute runs the plan p in the role ro, writing into opt.Out: it is the
// run engine, the one function every run goes through, and where a
// newcomer starts reading. The exported entry points build the plan and
// pick the role:
//
//	Train       a fresh plan (startRun)      processRole (run.go)
//	Resume      a resumed plan               processRole
//	RunRank     a fresh plan (startRun)      rankRole (rank.go)
//	ResumeRank  a resumed plan               rankRole
//
// execute builds the runner, starts it (runner.begin initialises the
// optimizer and records round 0; runner.resume restores the checkpoint)
// and runs its round loop (runner.loop), which ends in runner.finish. What
// a rank does differently from a single process, its role says; the
// rank's life around its run (connecting, agreeing on the round, leaving)
// is RunRankJob's (ranklife.go).
func execute(ctx context.Context, p *plan, opt Options, ro role) (*Summary, error) {
	if p.ck != nil {
		opt.compute = p.ck.meta.Compute
	}
	r, err := newRunner(p.cfg, opt, ro)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.inputs = p.inputs
	if p.ck == nil {
		err = r.begin(ctx)
	} else {
		err = r.resume(p)
	}
	if err != nil {
		return nil, err
	}
	return r.loop(ctx)
}

// begin starts a fresh run: it initialises the optimizer, records round 0
// and writes its checkpoint, from which on a killed run can be resumed.
func (r *runner) begin(ctx context.Context) error {
	if r.progress != nil {
		r.role.announce(r.progress, r.s)
	}
	init := r.role.initContext(ctx)
	if init.Err() != nil {
		return r.interruptedBeforeStart()
	}
	if err := r.s.opt.Init(init); err != nil {
		if init.Err() != nil {
			return r.interruptedBeforeStart()
		}
		return err
	}
	if r.role.measures() {
		var err error
		if r.metrics, err = createMetrics(filepath.Join(r.out, MetricsFile), nil); err != nil {
			return err
		}
	}
	if err := r.record(context.WithoutCancel(ctx)); err != nil {
		return r.fail(err)
	}
	return r.checkpoint()
}

// resume puts the runner in the state of p's checkpoint.
func (r *runner) resume(p *plan) error {
	if err := r.restore(p.ck); err != nil {
		return fmt.Errorf("resume from %s: %w", p.ckPath, err)
	}
	if p.measured >= 0 {
		r.measured = p.measured
	}
	if p.rewrite {
		return r.checkpoint()
	}
	return nil
}
