package train

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train/curves"
)

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
	role     role      // a run in one process, or one rank of several
	measured int       // the round last measured (recorded or, on a rank, gathered); -1 for none
}

// newRunner builds the run of cfg in the role ro, whose memory its caller
// has checked.
func newRunner(cfg Config, opt Options, ro role) (*runner, error) {
	part := ro.part()
	s, err := buildSetup(cfg, part, opt.compute)
	if err != nil {
		return nil, err
	}
	if part != nil {
		// Over a pipelined transport each round but the last sends the
		// next round's vectors while the rank's other nodes still compute.
		s.opt.SetFinalRound(cfg.Iters)
	}
	if s.test == nil && ro.measures() && opt.Progress != nil {
		fmt.Fprintf(opt.Progress, "note: %s\n", noTestSetNote(cfg))
	}
	if names := models.ConstantInitialisers(s.model); len(names) > 0 && ro.measures() && opt.Progress != nil {
		fmt.Fprintf(opt.Progress, "note: %s\n", constantsNote(cfg.Model, names))
	}
	return &runner{
		s:        s,
		out:      opt.Out,
		start:    time.Now(),
		lastCkp:  -1,
		measured: -1,
		xbar:     make([]float32, s.model.NumParams()),
		// A rank that does not measure has no metrics to show: it prints
		// a line on its own nodes at each evaluation round (logNodes).
		report:   newReporter(opt.Progress, opt.Bar, cfg, ro.measures()),
		progress: opt.Progress,
		role:     ro,
	}, nil
}

// noTestSetNote says that a run of cfg, whose data hold no test set,
// measures its "test" accuracy and loss on the training set, as
// summary.json's eval_set records.
func noTestSetNote(cfg Config) string {
	what := cfg.DataName()
	if cfg.DataDir != "" {
		what += " in " + cfg.DataDir
	}
	return fmt.Sprintf("%s has no test set: test accuracy and loss are measured on the training set (summary.json: eval_set \"train\")", what)
}

// constantsNote says that names, initialisers of the ONNX file model,
// multiply or are added to the network's data and stay constant, as
// gtstorm summary lists them: torch may train some of them (a layer scale,
// ReZero's alpha), which only --trainable makes trainable here.
func constantsNote(model string, names []string) string {
	const shown = 6
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	what := "1 initialiser multiplies or is added to the data and stays constant"
	if len(names) > 1 {
		what = fmt.Sprintf("%d initialisers multiply or are added to the data and stay constant", len(names))
	}
	return fmt.Sprintf("%s: %s (%s); if torch trains them, name them with --trainable (gtstorm summary --model %s lists them)",
		model, what, list, model)
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
		if r.evaluates(t) {
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
	if !errors.Is(err, decentral.ErrDiverged) {
		if lost := r.role.lost(r, err); lost != nil {
			return lost
		}
	}
	if errors.Is(err, decentral.ErrDiverged) && len(r.rows) > 0 {
		sum := r.summary()
		sum.Diverged = divergence(r.s.opt.Round(), err)
		writeJSON(filepath.Join(r.out, SummaryFile), sum)
	}
	if r.lastCkp >= 0 {
		return fmt.Errorf("%w (the last good checkpoint, of round %d, is %s)", err, r.lastCkp, filepath.Join(r.out, CheckpointFile))
	}
	return fmt.Errorf("%w (no checkpoint was written before it)", err)
}

// evaluates reports whether round t is an evaluation round: every
// --eval-every rounds and the last.
func (r *runner) evaluates(t int) bool {
	return t%r.s.cfg.EvalEvery == 0 || t == r.s.cfg.Iters
}

// lastRow returns the latest metrics row, or nil.
func (r *runner) lastRow() *Row {
	if len(r.rows) == 0 {
		return nil
	}
	return &r.rows[len(r.rows)-1]
}

// record evaluates the current state and appends a metrics row. The role
// readies the evaluation first: on a rank of a run over several processes
// it gathers every node's state on rank 0, which alone evaluates and
// writes the row.
func (r *runner) record(ctx context.Context) error {
	t := r.s.opt.Round()
	evaluates, err := r.role.collect(ctx, r.s.opt, r.progress)
	if err != nil {
		return err
	}
	if !evaluates {
		r.measured = t
		return nil
	}
	row, err := r.evaluate(ctx)
	if err != nil {
		return err
	}
	if !(row.Consensus <= blownApart) {
		return fmt.Errorf("%w: the nodes' models have blown apart (consensus error %.3g at round %d)", decentral.ErrDiverged, row.Consensus, row.Round)
	}
	r.rows = append(r.rows, row)
	if err := r.metrics.append(row); err != nil {
		return err
	}
	r.measured = t
	return nil
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
	acc, loss, err := s.pool.Evaluate(r.xbar, s.evalSet, EvalChunk)
	if err != nil {
		return Row{}, err
	}
	var local float64
	honest := opt.Honest() // every node, unless some are Byzantine
	for _, i := range honest {
		a, _, err := s.pool.Evaluate(opt.Node(i), s.localSet, EvalChunk)
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
	if !r.role.measures() {
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
	skipped, err := curves.PlotReport(path, title, []curves.Curve{CurveOf(cfg.Algo, [][]Row{r.rows})})
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
	wait := r.role.waitPerRound(c.Rounds)
	sum := &Summary{
		Algo: cfg.Algo, Dataset: cfg.Dataset, Data: cfg.DataName(), Model: s.model.Name(), Params: s.model.NumParams(),
		Partition: cfg.Partition, Topology: cfg.Topology, Mixing: s.mix.Name(),
		Nodes: cfg.Nodes, Edges: len(s.mix.Graph().Edges), Iters: cfg.Iters, Batch: cfg.Batch,
		Eta0: Num(cfg.Eta0), Seed: cfg.Seed,
		Lambda: Num(lambda), LambdaMeaning: meaning, EvalSet: evalSet,
		FinalTestAcc: Num(last.TestAcc), FinalTestLoss: Num(last.TestLoss),
		LocalTestAcc: Num(last.LocalTestAcc), TrainLoss: Num(last.TrainLoss),
		ConsensusError: Num(last.Consensus), GradNormSq: Num(last.GradNormSq),
		Stationarity: Num(last.Stationarity()), Samples: c.Samples, CommRounds: c.Rounds,
		BytesSentPerNode: c.MaxBytesSent(), StateFloatsPerNode: c.StateFloats,
		Seconds: Num(last.Seconds), NetworkWaitPerRound: wait, Inputs: r.inputs,
		BytesPerRound: Num(float64(c.MaxBytesSent()) / float64(max(c.Rounds, 1))), CompressionRatio: Num(s.opt.CompressionRatio()),
		ComputeSeconds: Num(s.compute), Target: Target(cfg, r.rows),
		Kernels: r.role.kernels(), Workers: s.opt.Workers(),
	}
	// Only the settings that apply: p_c draws the Erdős–Rényi graph, ρ
	// weighs GT-STORM's momentum.
	if cfg.Topology == "er" {
		sum.PC = Num(cfg.PC)
	}
	if KnobApplies(cfg, "rho") {
		sum.Rho = Num(s.opt.Schedule().RhoValue())
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

// kernelSetsName names the kernel sets of the ranks of a run, sets[r]
// being rank r's ("" unknown): the set, where every rank ran the same, or
// "mixed: " and each set with its ranks, such as "mixed: avx2 on ranks 0,
// 2; go on rank 1". Every set gives the same bits.
func kernelSetsName(sets []string) string {
	if !slices.ContainsFunc(sets, func(s string) bool { return s != sets[0] }) {
		return sets[0]
	}
	var names []string
	ranks := map[string][]string{}
	for r, s := range sets {
		s = cmp.Or(s, "unknown")
		if _, ok := ranks[s]; !ok {
			names = append(names, s)
		}
		ranks[s] = append(ranks[s], strconv.Itoa(r))
	}
	parts := make([]string, len(names))
	for i, s := range names {
		word := "rank"
		if len(ranks[s]) > 1 {
			word = "ranks"
		}
		parts[i] = fmt.Sprintf("%s on %s %s", s, word, strings.Join(ranks[s], ", "))
	}
	return "mixed: " + strings.Join(parts, "; ")
}

// writeJSON writes v as indented JSON, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}
