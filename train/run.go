package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/internal/kernels"
)

// Files a run writes into its output folder.
const (
	MetricsFile    = "metrics.csv"
	SummaryFile    = "summary.json"
	CurveFile      = "curve.png"
	ConfigFile     = "config.json"
	CheckpointFile = "checkpoint.gtck" // the latest resume state
	ModelFile      = "model.gtck"      // the final averaged model
)

// Options says where a run writes and how it reports progress.
type Options struct {
	Out      string    // output folder; created if missing
	Progress io.Writer // progress reports; nil for none
	Bar      bool      // draw a progress bar (for a terminal) instead of plain lines
	// Overwrite lets Train replace a previous run's outputs in Out; without
	// it Train refuses a folder that holds a run.
	Overwrite bool

	// fingerprints caches the input files' hashes across the runs of a
	// grid (see inputFiles); nil outside one.
	fingerprints map[string]InputFile
	// compute is the measured gradient time of a resumed run's simulated
	// network (0 measures it afresh).
	compute float64
}

// ErrInputsChanged is wrapped by the error Resume returns when a file the
// run read (data, edge list) is gone or has other content than when the run
// started.
var ErrInputsChanged = errors.New("inputs changed")

// Train runs cfg from the start and writes metrics.csv, summary.json,
// curve.png, config.json and checkpoints into opt.Out. A cancelled ctx
// finishes the current round, writes a checkpoint and returns an error
// wrapping ErrInterrupted. A run whose state becomes NaN or Inf stops with
// an error wrapping decentral.ErrDiverged; its summary.json then says so.
//
// File settings are made absolute and every input file is fingerprinted, so
// that resuming does not depend on the current folder and refuses changed
// inputs.
func Train(ctx context.Context, cfg Config, opt Options) (*Summary, error) {
	cfg, inputs, unlock, err := startRun(cfg, opt, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := newRunner(cfg, opt, nil)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.inputs = inputs
	if r.progress != nil && cfg.Algo == decentral.D2 && r.s.mix.Directed() {
		fmt.Fprintf(r.progress, "note: D² on the directed %s graph is outside its theory, which wants a symmetric W: on (I + P)/2 its recursion can have modes that grow (see README)\n", cfg.Topology)
	}
	if ctx.Err() != nil {
		return nil, r.interruptedBeforeStart()
	}
	if err := r.s.opt.Init(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, r.interruptedBeforeStart()
		}
		return nil, err
	}
	if r.metrics, err = createMetrics(filepath.Join(opt.Out, MetricsFile), nil); err != nil {
		return nil, err
	}
	if err := r.record(context.WithoutCancel(ctx)); err != nil {
		return nil, r.fail(err)
	}
	// Round 0's checkpoint: from here on a killed run can be resumed.
	if err := r.checkpoint(); err != nil {
		return nil, err
	}
	return r.loop(ctx)
}

// startRun checks cfg (and, for a rank, check), makes its file settings
// absolute, refuses a run that cannot fit before it creates its folder,
// takes opt.Out, clears a previous run's outputs and writes config.json.
// It returns the resolved cfg, its inputs' fingerprints and the release of
// the folder's lock.
func startRun(cfg Config, opt Options, check func(Config) error) (Config, []InputFile, func(), error) {
	if err := cfg.Validate(); err != nil {
		return cfg, nil, nil, err
	}
	cfg, err := cfg.Resolved()
	if err != nil {
		return cfg, nil, nil, err
	}
	if check != nil {
		if err := check(cfg); err != nil {
			return cfg, nil, nil, err
		}
	}
	if err := cfg.CheckMemory(); err != nil {
		return cfg, nil, nil, err
	}
	if err := cfg.checkGraphs(); err != nil {
		return cfg, nil, nil, err
	}
	unlock, err := lockOut(opt.Out)
	if err != nil {
		return cfg, nil, nil, err
	}
	inputs, err := inputFiles(cfg, opt.fingerprints)
	if err == nil {
		err = clearPrevious(opt)
	}
	if err == nil {
		err = writeJSON(filepath.Join(opt.Out, ConfigFile), cfg)
	}
	if err != nil {
		unlock()
		return cfg, nil, nil, err
	}
	return cfg, inputs, unlock, nil
}

// clearPrevious refuses a folder that holds a run (it has a checkpoint, a
// model or a summary) unless opt.Overwrite is set, and removes the outputs
// of a previous run. A folder whose run was stopped before its first
// checkpoint holds nothing to resume and is taken over.
func clearPrevious(opt Options) error {
	if !opt.Overwrite {
		for _, f := range []string{CheckpointFile, ModelFile, SummaryFile} {
			if _, err := os.Stat(filepath.Join(opt.Out, f)); err == nil {
				return &RunExistsError{Dir: opt.Out, File: f}
			}
		}
		if err := refuseForeign(opt.Out); err != nil {
			return err
		}
	}
	for _, f := range []string{CheckpointFile, ModelFile, SummaryFile, MetricsFile, CurveFile} {
		path := filepath.Join(opt.Out, f)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: clear the previous run: %w", opt.Out, err)
		}
	}
	return nil
}

// runEntries are the names a run folder may hold: a run's outputs, its
// lock, and what launch adds for its ranks (whose checkpoints, named by
// RankCheckpointFile, a run folder may hold too).
var runEntries = []string{ConfigFile, CheckpointFile, ModelFile, SummaryFile, MetricsFile, CurveFile,
	LockFile, "ranks.txt", "ranks", "certs"}

// refuseForeign refuses a folder holding anything a run does not write (a
// grid's tables, a user's own metrics.csv beside other files), so that a
// run never writes into, or clears, files that are not its own. Hidden
// files (temporary files of an interrupted write) do not count.
func refuseForeign(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var foreign []string
	for _, e := range entries {
		name := e.Name()
		rankCheckpoint := strings.HasPrefix(name, rankCheckpointPrefix) && strings.HasSuffix(name, ".gtck")
		if !strings.HasPrefix(name, ".") && !slices.Contains(runEntries, name) && !rankCheckpoint {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		return &NotRunFolderError{Dir: dir, Names: foreign}
	}
	return nil
}

// Resume continues the run in out from its last checkpoint, up to iters
// rounds (0 keeps the configured count). The finished run's metrics and
// summary equal those of an uninterrupted run of that many rounds, wall
// times aside: extending a finished run drops its last metrics row when
// that row lies off the --eval-every grid of the longer run.
func Resume(ctx context.Context, out string, iters int, opt Options) (*Summary, error) {
	opt.Out = out
	ckPath := filepath.Join(out, CheckpointFile)
	if _, err := os.Stat(ckPath); err != nil {
		_, cerr := os.Stat(filepath.Join(out, ConfigFile))
		return nil, &NoCheckpointError{Dir: out, Started: cerr == nil, Err: err}
	}
	unlock, err := lockOut(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ck, err := readCheckpoint(ckPath)
	if err != nil {
		return nil, err
	}
	cfg := ck.meta.Config
	if err := checkConfigFile(out, cfg, iters, opt.Progress); err != nil {
		return nil, err
	}
	if iters != 0 {
		if iters < ck.snap.Round {
			return nil, &ConfigError{"iters", iters, fmt.Sprintf("at least the %d rounds already done", ck.snap.Round)}
		}
		cfg.Iters = iters
		if err := cfg.checkGraphs(); err != nil {
			return nil, err
		}
	}
	inputs, err := reopenRun(cfg, ck, ckPath, opt)
	if err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(out, ConfigFile), cfg); err != nil {
		return nil, err
	}
	opt.compute = ck.meta.Compute
	r, err := newRunner(cfg, opt, nil)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.inputs = inputs
	if err := r.restore(ck); err != nil {
		return nil, fmt.Errorf("resume from %s: %w", ckPath, err)
	}
	if cfg != ck.meta.Config {
		// The checkpoint must agree with config.json from now on.
		if err := r.checkpoint(); err != nil {
			return nil, err
		}
	}
	return r.loop(ctx)
}

// reopenRun checks the settings of a run resumed from the checkpoint ck at
// ckPath in opt.Out, and that it fits in memory; it returns the inputs'
// fingerprints, refusing any file that changed since the checkpoint, and
// removes the summary and curve a shorter run left, which would otherwise
// pass for this one's until it ends.
func reopenRun(cfg Config, ck *resumeState, ckPath string, opt Options) ([]InputFile, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", ckPath, err)
	}
	if err := cfg.CheckMemory(); err != nil {
		return nil, err
	}
	inputs, err := inputFiles(cfg, opt.fingerprints)
	if err != nil {
		return nil, err
	}
	if ck.meta.Inputs != nil {
		if d := inputsChanged(ck.meta.Inputs, inputs); d != "" {
			return nil, fmt.Errorf("resume %s: %w: %s; the run must continue on the files it started with", opt.Out, ErrInputsChanged, d)
		}
	}
	for _, f := range []string{SummaryFile, CurveFile} {
		if err := os.Remove(filepath.Join(opt.Out, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("resume %s: %w", opt.Out, err)
		}
	}
	return inputs, nil
}

// runner drives one run: the round loop, evaluations, outputs, checkpoints.
type runner struct {
	s        *setup
	out      string
	rows     []Row
	metrics  *metricsLog // metrics.csv, open for appending
	inputs   []InputFile
	prior    float64 // seconds spent before this process (a resumed run)
	start    time.Time
	lastCkp  int         // round of the last checkpoint written
	ckMark   metricsMark // the metrics rows the last checkpoint covers
	xbar     []float32
	report   *reporter
	progress io.Writer // notes for the user; nil for none
	rank     *rankRole // one rank of a run over several processes; nil for all nodes here
	measured int       // the round last measured (recorded or, on a rank, gathered); -1 for none
}

// newRunner builds the run of cfg, whose memory its caller has checked.
func newRunner(cfg Config, opt Options, part *rankPart) (*runner, error) {
	s, err := buildSetup(cfg, part, opt.compute)
	if err != nil {
		return nil, err
	}
	return &runner{
		s:        s,
		out:      opt.Out,
		start:    time.Now(),
		lastCkp:  -1,
		measured: -1,
		xbar:     make([]float32, s.model.NumParams()),
		report:   newReporter(opt.Progress, opt.Bar, cfg),
		progress: opt.Progress,
	}, nil
}

// close releases the optimizer's workers and metrics.csv.
func (r *runner) close() {
	r.s.opt.Close()
	if r.metrics != nil {
		r.metrics.close()
	}
}

// interruptedBeforeStart is the error of a run interrupted while it loaded
// its data or initialised, before any checkpoint.
func (r *runner) interruptedBeforeStart() error {
	return &InterruptedError{Dir: r.out}
}

// seconds returns the wall time of the run so far, across resumptions.
func (r *runner) seconds() float64 { return r.prior + time.Since(r.start).Seconds() }

// loop runs rounds up to the configured count, then writes the final
// outputs. ctx is looked at between rounds only: a round once begun is
// finished, so that the checkpoint of an interrupted run is a state of the
// uninterrupted one (optimizer and samplers alike).
func (r *runner) loop(ctx context.Context) (*Summary, error) {
	cfg, opt := r.s.cfg, r.s.opt
	work := context.WithoutCancel(ctx)
	r.report.begin(opt.Round(), r.lastRow())
	defer r.report.end()
	for opt.Round() < cfg.Iters {
		if ctx.Err() != nil {
			return nil, r.interrupt()
		}
		if err := opt.Step(work); err != nil {
			return nil, r.fail(err)
		}
		t := opt.Round()
		if t%cfg.EvalEvery == 0 || t == cfg.Iters {
			if err := r.record(work); err != nil {
				return nil, r.fail(err)
			}
		}
		if cfg.CheckpointEvery > 0 && t%cfg.CheckpointEvery == 0 && t < cfg.Iters {
			if err := r.checkpoint(); err != nil {
				return nil, err
			}
		}
		r.report.step(t, r.lastRow())
	}
	return r.finish()
}

// interrupt writes a checkpoint of the last completed round and returns
// ErrInterrupted.
func (r *runner) interrupt() error {
	if err := r.checkpoint(); err != nil {
		return err
	}
	return &InterruptedError{Dir: r.out, Round: r.s.opt.Round(), Checkpoint: filepath.Join(r.out, CheckpointFile)}
}

// fail reports a failed run (a diverged node, a failed evaluation) and
// names the checkpoint that survives it, which is never overwritten by a bad
// state. A diverged run's summary.json records the divergence and the last
// good evaluation, so that a grid can report it and move on.
func (r *runner) fail(err error) error {
	if r.metrics != nil {
		r.metrics.sync() // the rows so far are all good; ignore a second failure
	}
	if r.rank != nil && !errors.Is(err, decentral.ErrDiverged) && r.lastCkp != r.s.opt.Round() {
		// A rank lost a peer (or failed to measure): the state is still
		// that of the last completed round, which a resume starts from.
		if cerr := r.checkpoint(); cerr == nil {
			return fmt.Errorf("%w (this rank's checkpoint of round %d is %s)", err, r.lastCkp, filepath.Join(r.out, RankCheckpointFile(r.lastCkp)))
		}
	}
	if errors.Is(err, decentral.ErrDiverged) && len(r.rows) > 0 {
		sum := r.summary()
		sum.Diverged = fmt.Sprintf("after round %d: %v", r.s.opt.Round(), err)
		writeJSON(filepath.Join(r.out, SummaryFile), sum)
	}
	if r.lastCkp >= 0 {
		return fmt.Errorf("%w (the last good checkpoint, of round %d, is %s)", err, r.lastCkp, filepath.Join(r.out, CheckpointFile))
	}
	return fmt.Errorf("%w (no checkpoint was written before it)", err)
}

// lastRow returns the latest metrics row, or nil.
func (r *runner) lastRow() *Row {
	if len(r.rows) == 0 {
		return nil
	}
	return &r.rows[len(r.rows)-1]
}

// record evaluates the current state and appends a metrics row. On a rank
// of a run over several processes it first gathers every node's state on
// rank 0, which alone evaluates and writes the row.
func (r *runner) record(ctx context.Context) error {
	r.measured = r.s.opt.Round()
	if r.rank != nil {
		if err := r.rank.gather(ctx, r.s.opt); err != nil {
			return err
		}
		if !r.rank.measures() {
			r.rank.logNodes(r.progress, r.s.opt.Round())
			return nil
		}
	}
	row, err := r.evaluate(ctx)
	if err != nil {
		return err
	}
	if !(row.Consensus <= blownApart) {
		return fmt.Errorf("%w: the nodes' models have blown apart (consensus error %.3g at round %d)", decentral.ErrDiverged, row.Consensus, row.Round)
	}
	r.rows = append(r.rows, row)
	return r.metrics.append(row)
}

// blownApart is the consensus error (1/m)Σ‖x_i − x̄‖² beyond which a run
// has diverged though its values are still finite: D² on a graph that
// loses most of its links, for one, grows it geometrically, and float32
// reaches Inf only after the run may have ended.
const blownApart = 1e30

// evaluate measures the current state: x̄ on the test set, the local models
// on its head, the global gradient at x̄ on the fixed training subsets. With
// Byzantine nodes every measure counts the honest nodes only: x̄ is their
// mean, the consensus error, losses and local accuracy are theirs.
func (r *runner) evaluate(ctx context.Context) (Row, error) {
	s, opt := r.s, r.s.opt
	opt.Mean(r.xbar)
	acc, loss, err := s.pool.Evaluate(r.xbar, s.evalSet, evalChunk)
	if err != nil {
		return Row{}, err
	}
	var local float64
	honest := opt.Honest() // every node, unless some are Byzantine
	for _, i := range honest {
		a, _, err := s.pool.Evaluate(opt.Node(i), s.localSet, evalChunk)
		if err != nil {
			return Row{}, fmt.Errorf("node %d: %w", i, err)
		}
		local += a
	}
	gn, _, err := opt.GradNormSq(ctx, s.gradBatches)
	if err != nil {
		return Row{}, err
	}
	c := opt.Counters()
	return Row{
		Round:        opt.Round(),
		TestAcc:      acc,
		TestLoss:     loss,
		LocalTestAcc: local / float64(len(honest)),
		TrainLoss:    opt.Loss(),
		Consensus:    opt.ConsensusError(),
		GradNormSq:   gn,
		Eta:          opt.Eta(),
		Beta:         opt.Beta(),
		Samples:      c.Samples,
		BytesPerNode: c.MaxBytesSent(),
		Seconds:      r.seconds(),
		SimSeconds:   opt.SimSeconds(),
	}, nil
}

// finish evaluates the final round if no row has (a resume to the rounds
// already done), then writes the final checkpoint, model, summary and curve.
func (r *runner) finish() (*Summary, error) {
	if r.measured != r.s.opt.Round() {
		if err := r.record(context.Background()); err != nil {
			return nil, r.fail(err)
		}
	}
	if r.lastCkp != r.s.opt.Round() || r.ckMark.Rows != len(r.rows) {
		if err := r.checkpoint(); err != nil {
			return nil, err
		}
	}
	if r.rank != nil && !r.rank.measures() {
		return nil, nil // rank 0 writes the model, summary and curve
	}
	if err := r.writeModel(); err != nil {
		return nil, err
	}
	sum := r.summary()
	if err := writeJSON(filepath.Join(r.out, SummaryFile), sum); err != nil {
		return nil, err
	}
	cfg := r.s.cfg
	title := fmt.Sprintf("%s on %s (%s, %d nodes)", cfg.Algo, cfg.DataName(), cfg.Partition, cfg.Nodes)
	path := filepath.Join(r.out, CurveFile)
	skipped, err := PlotCurvesReport(path, title, []Curve{CurveOf(cfg.Algo, [][]Row{r.rows})})
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		if r.progress != nil {
			fmt.Fprintf(r.progress, "note: %s: %s\n", path, s)
		}
	}
	return sum, nil
}

// summary returns summary.json's content for the current state.
func (r *runner) summary() *Summary {
	cfg, s, last := r.s.cfg, r.s, r.rows[len(r.rows)-1]
	c := s.opt.Counters()
	evalSet := "test"
	if s.test == nil {
		evalSet = "train"
	}
	lambda, meaning := s.lambda()
	var wait Num
	if r.rank != nil && c.Rounds > 0 {
		if w, ok := r.rank.peers.(waitClock); ok {
			wait = Num(w.WaitTime().Seconds() / float64(c.Rounds))
		}
	}
	sum := &Summary{
		Algo: cfg.Algo, Dataset: cfg.Dataset, Data: cfg.DataName(), Model: s.model.Name(), Params: s.model.NumParams(),
		Partition: cfg.Partition, Topology: cfg.Topology, PC: Num(cfg.PC), Mixing: s.mix.Name(),
		Nodes: cfg.Nodes, Edges: len(s.mix.Graph().Edges), Iters: cfg.Iters, Batch: cfg.Batch,
		Eta0: Num(cfg.Eta0), Rho: Num(s.opt.Schedule().RhoValue()), Seed: cfg.Seed,
		Lambda: Num(lambda), LambdaMeaning: meaning, EvalSet: evalSet,
		FinalTestAcc: Num(last.TestAcc), FinalTestLoss: Num(last.TestLoss),
		LocalTestAcc: Num(last.LocalTestAcc), TrainLoss: Num(last.TrainLoss),
		ConsensusError: Num(last.Consensus), GradNormSq: Num(last.GradNormSq),
		Stationarity: Num(last.Stationarity()), Samples: c.Samples, CommRounds: c.Rounds,
		BytesSentPerNode: c.MaxBytesSent(), StateFloatsPerNode: c.StateFloats,
		Seconds: Num(last.Seconds), NetworkWaitPerRound: wait, Inputs: r.inputs,
		BytesPerRound: Num(float64(c.MaxBytesSent()) / float64(max(c.Rounds, 1))), CompressionRatio: Num(s.opt.CompressionRatio()),
		ComputeSeconds: Num(s.compute), Target: target(cfg, r.rows),
		Kernels: kernels.Name(), Workers: s.opt.Workers(),
	}
	if s.compute > 0 {
		sum.SimSeconds = Num(last.SimSeconds)
	}
	if cfg.hasByzantine() {
		sum.Byzantine, sum.Attack, sum.Aggregate = s.opt.Byzantine(), cfg.Attack, cfg.Aggregate
		sum.Measured = measuredNodes(sum.Byzantine, cfg.Nodes)
	}
	return sum
}

// writeJSON writes v as indented JSON, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}
