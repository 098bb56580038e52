package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/atomicfile"
)

// Cell is one setting of a grid of runs: the same configuration under
// several seeds.
type Cell struct {
	Label   string   // e.g. "gt-storm / label" or "rho=10"
	Configs []Config // one per seed
}

// CellResult is the outcome of a cell's runs.
type CellResult struct {
	Cell
	Summaries []*Summary
	Rows      [][]Row
}

// Seeds returns n copies of cfg with seeds cfg.Seed, cfg.Seed+1, ….
func Seeds(cfg Config, n int) []Config {
	out := make([]Config, n)
	for k := range out {
		out[k] = cfg
		out[k].Seed = cfg.Seed + uint64(k)
	}
	return out
}

// CompareCells returns the cells of `gtstorm compare`: every algorithm on
// every partition, each under seeds seeds. An algorithm may name its
// compressor after a colon: choco:topk:0.01 is CHOCO with top-k 1%. base's
// γ applies to the CHOCO cells only.
func CompareCells(base Config, algos, partitions []string, seeds int) []Cell {
	var cells []Cell
	for _, a := range algos {
		for _, p := range partitions {
			c := base
			c.Algo, c.Partition = a, p
			if algo, comp, ok := strings.Cut(a, ":"); ok {
				c.Algo, c.Compress = algo, comp
			}
			if c.Algo != decentral.CHOCO {
				c.Gamma = 0 // --gamma is CHOCO's: it sets the CHOCO cells' γ
			}
			cells = append(cells, Cell{Label: a + " / " + p, Configs: Seeds(c, seeds)})
		}
	}
	return cells
}

// SweepCells returns the cells of `gtstorm sweep`: base with the setting
// named by param (any of Sweepable) set to each of values in turn.
func SweepCells(base Config, param string, values []string, seeds int) ([]Cell, error) {
	var cells []Cell
	for _, v := range values {
		c := base
		if err := c.Set(param, v); err != nil {
			return nil, err
		}
		cells = append(cells, Cell{Label: param + "=" + v, Configs: Seeds(c, seeds)})
	}
	return cells, nil
}

// GridFile lists the cells of a grid in its output folder, so that a rerun
// knows the folder holds the same grid.
const GridFile = "grid.json"

// RunGrid runs every cell's configurations, each in its own folder under
// out (<label>/seed<k>). A run already finished there with the same
// configuration and the same input files is read back instead of repeated,
// and an interrupted one is resumed, so an interrupted grid continues where
// it stopped. A run that diverges is recorded as diverged (its summary says
// so) and the grid goes on, and so is a run whose algorithm cannot use one
// of the graphs its rounds mix with (D² under link failures), which is not
// started.
//
// Like Train, RunGrid refuses an out that holds anything but this grid's
// own earlier runs (another grid, other files) unless opt.Overwrite is set;
// then it runs there, still reusing the runs whose settings match.
func RunGrid(ctx context.Context, cells []Cell, out string, opt Options) ([]CellResult, error) {
	cells = slices.Clone(cells)
	seen := map[string]string{}    // a run's settings → its cell
	refused := map[string]string{} // a run's settings → why it cannot run
	for i, c := range cells {
		c.Configs = slices.Clone(c.Configs)
		for k, cfg := range c.Configs {
			if err := cfg.Validate(); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Label, err)
			}
			if cfg.SimulatesNetwork() && cfg.Compute == 0 {
				return nil, &ConfigError{"compute", "0", "the seconds one gradient takes (e.g. 2ms) in a grid on a simulated network, so that every cell is charged the same compute time (gtstorm train on a simulated network prints the time it measured per gradient)"}
			}
			r, err := cfg.Resolved()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Label, err)
			}
			key := runKey(r)
			if prev, dup := seen[key]; dup {
				return nil, &DuplicateCellsError{prev, c.Label}
			}
			seen[key] = c.Label
			c.Configs[k] = r
			if err := r.checkGraphs(); err != nil {
				refused[key] = err.Error()
			}
		}
		cells[i] = c
	}
	unlock, err := lockOut(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := claimGridFolder(out, cells, opt.Overwrite); err != nil {
		return nil, err
	}
	results := make([]CellResult, len(cells))
	total := 0
	for _, c := range cells {
		total += len(c.Configs)
	}
	opt.fingerprints = map[string]InputFile{} // each input is hashed once per grid
	n := 0
	for i, c := range cells {
		results[i].Cell = c
		for _, cfg := range c.Configs {
			n++
			if ctx.Err() != nil {
				return nil, &InterruptedError{Dir: out}
			}
			dir := filepath.Join(out, dirName(c.Label), fmt.Sprintf("seed%d", cfg.Seed))
			if opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "[%d/%d] %s, seed %d → %s\n", n, total, c.Label, cfg.Seed, dir)
			}
			if why, ok := refused[runKey(cfg)]; ok {
				if opt.Progress != nil {
					fmt.Fprintf(opt.Progress, "[%d/%d] %s, seed %d refused (%s); recorded, going on\n", n, total, c.Label, cfg.Seed, why)
				}
				results[i].Summaries = append(results[i].Summaries, refusedSummary(cfg, why))
				results[i].Rows = append(results[i].Rows, nil)
				continue
			}
			o := opt
			o.Out = dir
			sum, rows, err := runOrReuse(ctx, cfg, o)
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", c.Label, cfg.Seed, err)
			}
			if sum.Diverged != "" && opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "[%d/%d] %s, seed %d diverged %s; recorded, going on\n", n, total, c.Label, cfg.Seed, sum.Diverged)
			}
			results[i].Summaries = append(results[i].Summaries, sum)
			results[i].Rows = append(results[i].Rows, rows)
		}
	}
	return results, nil
}

// refusedSummary is the summary of a run of cfg that a grid did not start,
// and why.
func refusedSummary(cfg Config, why string) *Summary {
	return &Summary{Algo: cfg.Algo, Data: cfg.DataName(), Partition: cfg.Partition, Nodes: cfg.Nodes,
		Iters: cfg.Iters, Refused: why}
}

// runKey identifies the results of a run: its settings, less those that
// cannot change them.
func runKey(c Config) string {
	c.Workers, c.MaxMemory, c.TargetAcc, c.TargetStat = 0, 0, 0, 0
	b, _ := json.Marshal(c)
	return string(b)
}

// sameResults reports whether runs of a and b give the same results.
func sameResults(a, b Config) bool { return runKey(a) == runKey(b) }

// gridManifest is grid.json.
type gridManifest struct {
	Cells []gridCell `json:"cells"`
}

type gridCell struct {
	Label   string   `json:"label"`
	Configs []Config `json:"configs"`
}

// claimGridFolder makes out this grid's folder: a folder that holds the
// same grid (by grid.json, settings that cannot change results aside) or
// nothing is taken; anything else only with overwrite.
func claimGridFolder(out string, cells []Cell, overwrite bool) error {
	path := filepath.Join(out, GridFile)
	var want gridManifest
	for _, c := range cells {
		want.Cells = append(want.Cells, gridCell{c.Label, c.Configs})
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		var have gridManifest
		if err := json.Unmarshal(b, &have); err != nil {
			if !overwrite {
				return &GridFolderError{Dir: out, Reason: fmt.Sprintf("holds a damaged %s (%v)", GridFile, err)}
			}
		} else if d := gridDifference(have, want); d != "" && !overwrite {
			return &GridFolderError{Dir: out, Reason: fmt.Sprintf("holds another grid (%s)", d)}
		}
	case errors.Is(err, os.ErrNotExist):
		entries, err := os.ReadDir(out)
		if err != nil {
			return err
		}
		var names []string
		for _, e := range entries {
			if e.Name() != LockFile {
				names = append(names, e.Name())
			}
		}
		if len(names) > 0 && !overwrite {
			if len(names) > 4 {
				names = append(names[:4], "…")
			}
			return &GridFolderError{Dir: out, Reason: fmt.Sprintf("is not empty (it holds %s)", strings.Join(names, ", "))}
		}
	default:
		return err
	}
	b, err = json.MarshalIndent(want, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}

// gridDifference describes how two grids differ, or returns "".
func gridDifference(have, want gridManifest) string {
	if len(have.Cells) != len(want.Cells) {
		return fmt.Sprintf("%d cells, this grid has %d", len(have.Cells), len(want.Cells))
	}
	for i, h := range have.Cells {
		w := want.Cells[i]
		if h.Label != w.Label {
			return fmt.Sprintf("cell %d is %q, this grid's is %q", i+1, h.Label, w.Label)
		}
		if len(h.Configs) != len(w.Configs) {
			return fmt.Sprintf("%s has %d seeds, this grid %d", h.Label, len(h.Configs), len(w.Configs))
		}
		for k := range h.Configs {
			if !sameResults(h.Configs[k], w.Configs[k]) {
				return fmt.Sprintf("%s, seed %d has other settings (%s)", h.Label, w.Configs[k].Seed, configDifference(h.Configs[k], w.Configs[k]))
			}
		}
	}
	return ""
}

// configDifference names the first setting in which a and b differ.
func configDifference(a, b Config) string {
	ma, mb := settingsMap(a), settingsMap(b)
	if k, ok := firstDifference(ma, mb); ok {
		return fmt.Sprintf("%s %s there, %s here", k, jsonText(ma[k]), jsonText(mb[k]))
	}
	return "none"
}

// runOrReuse returns the finished run of cfg in o.Out, resuming or starting
// it as needed. A run is reused only when its summary and its last metrics
// row are for cfg's round count (or it diverged) and its inputs are those
// of today.
func runOrReuse(ctx context.Context, cfg Config, o Options) (*Summary, []Row, error) {
	if prev, err := readConfig(filepath.Join(o.Out, ConfigFile)); err == nil && sameResults(prev, cfg) {
		inputs, err := inputFiles(cfg, o.fingerprints)
		if err != nil {
			return nil, nil, err
		}
		if sum, rows, err := readRun(o.Out); err == nil && finished(sum, rows, cfg) && inputsChanged(sum.Inputs, inputs) == "" {
			return sum, rows, nil
		}
		if _, err := os.Stat(filepath.Join(o.Out, CheckpointFile)); err == nil {
			_, err := Resume(ctx, o.Out, cfg.Iters, o)
			if err == nil || errors.Is(err, decentral.ErrDiverged) {
				return readRun(o.Out)
			}
			if !errors.Is(err, ErrInputsChanged) {
				return nil, nil, err
			}
		}
	}
	o.Overwrite = true // a run of other settings or inputs, or a broken one: the grid's own folder
	if _, err := Train(ctx, cfg, o); err != nil && !errors.Is(err, decentral.ErrDiverged) {
		return nil, nil, err
	}
	return readRun(o.Out)
}

// finished reports whether a run's summary and rows are those of a run of
// cfg that ended: all its rounds done, or diverged, with inputs recorded.
func finished(sum *Summary, rows []Row, cfg Config) bool {
	if sum.Inputs == nil || len(rows) == 0 {
		return false
	}
	if sum.Diverged != "" {
		return true
	}
	return sum.CommRounds == cfg.Iters && sum.Iters == cfg.Iters && rows[len(rows)-1].Round == cfg.Iters
}

func readConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(b, &c)
	return c, err
}

// readRun reads the summary and metrics of a finished run.
func readRun(dir string) (*Summary, []Row, error) {
	f, err := os.Open(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sum, err := ReadSummary(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	m, err := os.Open(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	rows, err := ReadCSV(m)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.Name(), err)
	}
	return sum, rows, nil
}

// dirName turns a cell label into a folder name.
func dirName(label string) string {
	r := strings.NewReplacer(" / ", "-", "/", "-", " ", "", ":", "-", "=", "-")
	return r.Replace(label)
}
