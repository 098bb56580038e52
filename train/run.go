package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
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

// WithInputCache returns o with a cache of input fingerprints, for the
// runs of a grid: given to all of them, it hashes each input file once.
func (o Options) WithInputCache() Options {
	o.fingerprints = map[string]InputFile{}
	return o
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
//
// A run that fails before its first checkpoint (its data cannot be read, its
// model not built) leaves no folder it made behind.
func Train(ctx context.Context, cfg Config, opt Options) (*Summary, error) {
	_, statErr := os.Stat(opt.Out)
	made := errors.Is(statErr, os.ErrNotExist)
	cfg, inputs, unlock, err := startRun(cfg, opt, nil)
	if err != nil {
		removeMadeFolder(opt.Out, made, nil)
		return nil, err
	}
	sum, err := execute(ctx, &plan{cfg: cfg, inputs: inputs, measured: -1}, opt, processRole{})
	if err != nil {
		removeMadeFolder(opt.Out, made, unlock)
		return sum, err
	}
	unlock()
	return sum, nil
}

// removeMadeFolder removes out, which a run made (made) and which holds no
// checkpoint: the run stopped before its first round and left nothing to
// resume. It removes the run's config.json under the lock (unlock, nil
// where the run holds none), then the folder if nothing else is in it.
func removeMadeFolder(out string, made bool, unlock func()) {
	_, ckErr := os.Stat(filepath.Join(out, CheckpointFile))
	unstarted := made && errors.Is(ckErr, os.ErrNotExist)
	if unlock != nil {
		if unstarted {
			os.Remove(filepath.Join(out, ConfigFile))
		}
		unlock()
	}
	if unstarted {
		os.Remove(out) // only when empty: a folder another run took keeps its files
	}
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
	if err := cfg.CheckGraphs(); err != nil {
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
	LockFile, RanksFileName, RanksDir, CertsDir}

// refuseForeign refuses a folder holding anything a run does not write (a
// grid's tables, a user's own metrics.csv beside other files), so that a
// run never writes into, or clears, files that are not its own. A run's
// metrics and plot count as its own only beside its config.json, which a
// run writes first: alone, they are a user's. Hidden files (temporary
// files of an interrupted write) do not count.
func refuseForeign(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	_, noConfig := os.Stat(filepath.Join(dir, ConfigFile))
	var foreign []string
	for _, e := range entries {
		name := e.Name()
		rankCheckpoint := strings.HasPrefix(name, rankCheckpointPrefix) && strings.HasSuffix(name, ".gtck")
		ours := slices.Contains(runEntries, name) || rankCheckpoint
		if noConfig != nil && (name == MetricsFile || name == CurveFile) {
			ours = false
		}
		if !strings.HasPrefix(name, ".") && !ours {
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
	if err := refuseRankRun(out, ck); err != nil {
		return nil, err
	}
	cfg := ck.meta.Config
	if err := checkConfigFile(out, cfg, iters, opt.Progress); err != nil {
		return nil, err
	}
	if cfg, err = ResumeIters(cfg, ck.snap.Round, iters); err != nil {
		return nil, err
	}
	inputs, err := reopenRun(cfg, ck, ckPath, opt)
	if err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(out, ConfigFile), cfg); err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, inputs: inputs, ck: ck, ckPath: ckPath, rewrite: !reflect.DeepEqual(cfg, ck.meta.Config), measured: -1}
	return execute(ctx, p, opt, processRole{})
}

// ResumeIters returns cfg, the settings of a run that has done rounds,
// resumed to iters rounds in all (0: its own count), or a *ConfigError for
// --iters: fewer than the rounds done, or another count for a run whose
// steps are spread over its count (see checkScheduleRounds).
func ResumeIters(cfg Config, done, iters int) (Config, error) {
	if iters == 0 {
		return cfg, nil
	}
	if iters < done {
		return cfg, &ConfigError{"iters", iters, fmt.Sprintf("at least the %d rounds already done", done)}
	}
	if err := checkScheduleRounds(cfg, iters); err != nil {
		return cfg, err
	}
	cfg.Iters = iters
	if err := cfg.CheckGraphs(); err != nil {
		return cfg, err
	}
	return cfg, nil
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

// processRole is the role of a run with every node in this process.
type processRole struct{}

func (processRole) part() *rankPart { return nil }
func (processRole) measures() bool  { return true }

// initContext is ctx: a cancelled run stops while it initialises.
func (processRole) initContext(ctx context.Context) context.Context { return ctx }

func (processRole) announce(w io.Writer, s *setup) {
	if note := decentral.DirectedCaution(s.cfg.Algo, s.cfg.Topology); note != "" && s.mix.Directed() {
		fmt.Fprintf(w, "note: %s\n", note)
	}
}

func (processRole) collect(context.Context, *decentral.Optimizer, io.Writer) (bool, error) {
	return true, nil
}

func (processRole) placement() *RankPlacement { return nil }
func (processRole) kept(string, int) error    { return nil }
func (processRole) lost(*runner, error) error { return nil }
func (processRole) waitPerRound(int) Num      { return 0 }
func (processRole) kernels() string           { return kernels.Name() }

// BenchResult is the timing of a run's rounds, as `gtstorm bench` prints it.
type BenchResult struct {
	SecPerIter      float64 `json:"sec_per_iter"`       // seconds per communication round, all nodes
	GradEvalsPerSec float64 `json:"grad_evals_per_sec"` // gradient evaluations per second, all nodes
	PeakRSSMB       float64 `json:"peak_rss_mb"`        // the process's peak resident memory
	AllocsPerIter   float64 `json:"allocs_per_iter"`    // heap allocations per timed round
	Algo            string  `json:"algo"`
	Dataset         string  `json:"dataset"`
	Model           string  `json:"model"`
	Nodes           int     `json:"nodes"`
	Batch           int     `json:"batch"`
	Iters           int     `json:"iters"`
	Warmup          int     `json:"warmup"`
	Workers         int     `json:"workers"`
	Kernels         string  `json:"kernels"` // the compute kernel set: avx512, avx2, neon or go
	Params          int     `json:"params"`  // p, the model's parameter count
	Topology        string  `json:"topology"`
	Byzantine       []int   `json:"byzantine,omitempty"` // the nodes that lie
	Attack          string  `json:"attack,omitempty"`
	Aggregate       string  `json:"aggregate,omitempty"` // the rule replacing plain gossip
}

// Bench builds the run of cfg, runs warmup rounds, then times cfg.Iters
// rounds without evaluations or outputs.
func Bench(ctx context.Context, cfg Config, warmup int) (*BenchResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if warmup < 0 {
		return nil, &ConfigError{"warm-rounds", warmup, "0 or more rounds"}
	}
	if err := cfg.CheckGraphs(); err != nil {
		return nil, err
	}
	s, err := newSetup(cfg)
	if err != nil {
		return nil, err
	}
	defer s.opt.Close()
	if err := s.opt.Init(ctx); err != nil {
		return nil, err
	}
	for t := range warmup {
		if err := s.opt.Step(ctx); err != nil {
			return nil, fmt.Errorf("warm-up round %d: %w", t+1, err)
		}
	}
	evals0 := s.opt.Counters().GradEvals
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range cfg.Iters {
		if err := s.opt.Step(ctx); err != nil {
			return nil, err
		}
	}
	el := time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	evals := s.opt.Counters().GradEvals - evals0
	return &BenchResult{
		SecPerIter:      el / float64(cfg.Iters),
		GradEvalsPerSec: float64(evals) / el,
		PeakRSSMB:       peakRSSMB(),
		AllocsPerIter:   float64(after.Mallocs-before.Mallocs) / float64(cfg.Iters),
		Algo:            cfg.Algo,
		Dataset:         cfg.Dataset,
		Model:           s.model.Name(),
		Nodes:           cfg.Nodes,
		Batch:           cfg.Batch,
		Iters:           cfg.Iters,
		Warmup:          warmup,
		Workers:         s.opt.Workers(),
		Kernels:         kernels.Name(),
		Params:          s.model.NumParams(),
		Topology:        cfg.Topology,
		Byzantine:       s.opt.Byzantine(),
		Attack:          cfg.Attack,
		Aggregate:       cfg.Aggregate,
	}, nil
}

// peakRSSMB returns the process's peak resident set size in MiB (Linux
// reports ru_maxrss in KiB).
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// checkScheduleRounds refuses to resume a run of cfg to another round
// count iters when its step sizes depend on the run's T (--schedule cosine
// or step:…): the rounds already done took the steps of cfg.Iters rounds,
// so the result would be neither the old run nor a fresh run of iters
// rounds. The paper's and the constant schedule (and --warmup, whose ramp
// does not read T) resume to any round count.
func checkScheduleRounds(cfg Config, iters int) error {
	if iters == cfg.Iters {
		return nil
	}
	shape, _, err := decentral.ParseSchedule(cfg.StepSchedule)
	if err != nil || shape == "" {
		return nil // Validate reports a bad schedule
	}
	return &ConfigError{"iters", iters, fmt.Sprintf("the run's own %d rounds: its --schedule %s is spread over the round count, so the rounds done would not be those of a run of %d rounds (start a new run for another count)",
		cfg.Iters, cfg.StepSchedule, iters)}
}
