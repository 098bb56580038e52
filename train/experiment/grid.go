package experiment

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
	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/train"
)

// Cell is one setting of a grid of runs: the same configuration under
// several seeds.
type Cell struct {
	Label   string         // e.g. "gt-storm / label" or "rho=10"
	Configs []train.Config // one per seed
	// Vary holds the parts of Label that --vary set, such as "rho=10" or
	// "clean" (see [VaryCells]), in order.
	Vary []string
}

// CellResult is the outcome of a cell's runs.
type CellResult struct {
	Cell
	Summaries []*train.Summary
	Rows      [][]train.Row
}

// Seeds returns n copies of cfg with seeds cfg.Seed, cfg.Seed+1, ….
func Seeds(cfg train.Config, n int) []train.Config {
	out := make([]train.Config, n)
	for k := range out {
		out[k] = cfg
		out[k].Seed = cfg.Seed + uint64(k)
	}
	return out
}

// CompareCells returns the cells of `gtstorm compare`: every algorithm on
// every partition, each under seeds seeds. An algorithm may name the knob
// decentral.VariantKnob after a colon, its compressor: choco:topk:0.01 is
// CHOCO with top-k 1%. base's
// method knobs apply to the cells whose method takes them (γ to the CHOCO
// cells only; see train.Config.WithoutForeignKnobs).
func CompareCells(base train.Config, algos, partitions []string, seeds int) []Cell {
	var cells []Cell
	for _, a := range algos {
		for _, p := range partitions {
			c := base
			c.Algo, c.Partition = a, p
			algo, comp, spec := strings.Cut(a, ":")
			if spec {
				c.Algo = algo
			}
			// A method knob (--gamma, --period, …) sets the cells of
			// the methods that take it; a compressor named in --algos
			// is the cell's own (refused where it does not apply).
			c = c.WithoutForeignKnobs()
			if k, ok := decentral.VariantKnob(); ok && spec {
				c = c.WithKnob(k.Name, comp)
			}
			cells = append(cells, Cell{Label: a + " / " + p, Configs: Seeds(c, seeds)})
		}
	}
	return cells
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
// A grid of more than MaxGridRuns runs is refused (a *GridSizeError)
// before anything is checked or written.
//
// Like Train, RunGrid refuses an out that holds anything but this grid's
// own earlier runs (another grid, other files) unless opt.Overwrite is set;
// then it runs there, still reusing the runs whose settings match.
func RunGrid(ctx context.Context, cells []Cell, out string, opt train.Options) ([]CellResult, error) {
	if big := checkGrid(cells, 1); big != nil {
		return nil, big
	}
	cells, refused, err := resolveGrid(cells)
	if err != nil {
		return nil, err
	}
	unlock, err := train.LockOut(out)
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
	opt = opt.WithInputCache() // each input is hashed once per grid
	dirs := cellDirs(cells)
	n := 0
	for i, c := range cells {
		results[i].Cell = c
		for _, cfg := range c.Configs {
			n++
			if ctx.Err() != nil {
				return nil, &train.InterruptedError{Dir: out}
			}
			dir := filepath.Join(out, dirs[i], fmt.Sprintf("seed%d", cfg.Seed))
			if opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "[%d/%d] %s, seed %d → %s\n", n, total, c.Label, cfg.Seed, dir)
			}
			if why, ok := refused[train.ResultKey(cfg)]; ok {
				if opt.Progress != nil {
					fmt.Fprintf(opt.Progress, "[%d/%d] %s, seed %d refused (%s); recorded, going on\n", n, total, c.Label, cfg.Seed, why)
				}
				results[i].Summaries = append(results[i].Summaries, refusedSummary(cfg, why))
				results[i].Rows = append(results[i].Rows, nil)
				continue
			}
			o := opt
			o.Out = dir
			sum, rows, err := train.RunOrReuse(ctx, cfg, o)
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", c.Label, cfg.Seed, err)
			}
			if sum.Diverged != "" && opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "[%d/%d] %s, seed %d %s; recorded, going on\n", n, total, c.Label, cfg.Seed, sum.DivergedStatus())
			}
			results[i].Summaries = append(results[i].Summaries, sum)
			results[i].Rows = append(results[i].Rows, rows)
		}
	}
	return results, nil
}

// resolveGrid checks every configuration of cells and returns copies of
// the cells with each resolved, and the runs that cannot start (a graph
// their method cannot use) with why, by their settings. Two cells with a
// run of the same settings are a *DuplicateCellsError.
func resolveGrid(cells []Cell) ([]Cell, map[string]string, error) {
	cells = slices.Clone(cells)
	seen := map[string]string{}    // a run's settings → its cell
	refused := map[string]string{} // a run's settings → why it cannot run
	for i, c := range cells {
		c.Configs = slices.Clone(c.Configs)
		for k, cfg := range c.Configs {
			r, err := resolveRun(c.Label, cfg)
			if err != nil {
				return nil, nil, err
			}
			key := train.ResultKey(r)
			if prev, dup := seen[key]; dup {
				return nil, nil, &DuplicateCellsError{prev, c.Label}
			}
			seen[key] = c.Label
			c.Configs[k] = r
			if err := r.CheckGraphs(); err != nil {
				refused[key] = err.Error()
			}
		}
		cells[i] = c
	}
	return cells, refused, nil
}

// resolveRun validates one run of the cell label and returns it resolved.
func resolveRun(label string, cfg train.Config) (train.Config, error) {
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%s: %w", label, err)
	}
	if cfg.Nodes > graph.MaxNodes { // before any graph is drawn for it
		return cfg, &train.ConfigError{Flag: "nodes", Value: cfg.Nodes,
			Want: fmt.Sprintf("at most %d, the largest graph whose mixing matrix is supported", graph.MaxNodes)}
	}
	if cfg.SimulatesNetwork() && cfg.Compute == 0 {
		return cfg, &train.ConfigError{Flag: "compute", Value: "0", Want: "the seconds one gradient takes (e.g. 2ms) in a grid on a simulated network, so that every cell is charged the same compute time (gtstorm train on a simulated network prints the time it measured per gradient)"}
	}
	r, err := cfg.Resolved()
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", label, err)
	}
	return r, nil
}

// refusedSummary is the summary of a run of cfg that a grid did not start,
// and why.
func refusedSummary(cfg train.Config, why string) *train.Summary {
	return &train.Summary{Algo: cfg.Algo, Data: cfg.DataName(), Partition: cfg.Partition, Nodes: cfg.Nodes,
		Iters: cfg.Iters, Refused: why}
}

// gridManifest is grid.json.
type gridManifest struct {
	Cells []gridCell `json:"cells"`
}

type gridCell struct {
	Label   string         `json:"label"`
	Configs []train.Config `json:"configs"`
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
			if e.Name() != train.LockFile {
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
			if train.ResultKey(h.Configs[k]) != train.ResultKey(w.Configs[k]) {
				return fmt.Sprintf("%s, seed %d has other settings (%s)", h.Label, w.Configs[k].Seed, train.ConfigDifference(h.Configs[k], w.Configs[k]))
			}
		}
	}
	return ""
}

// dirName turns a cell label into a folder name.
func dirName(label string) string {
	r := strings.NewReplacer(" / ", "-", "/", "-", " ", "", ":", "-", "=", "-")
	return r.Replace(label)
}

// cellDirs returns the folder of each cell under a grid's output folder:
// dirName of its label, or, where an earlier cell's label gives the same
// name (values that differ only in the characters dirName replaces, such
// as data-dir=/d/a8a and data-dir=/d-a8a, or only in case, which some
// file systems ignore), that name with "-2", "-3", … appended, one no
// other cell's name is, so that no two cells run in one folder.
func cellDirs(cells []Cell) []string {
	key := strings.ToLower
	natural := map[string]bool{} // every cell's own name
	for _, c := range cells {
		natural[key(dirName(c.Label))] = true
	}
	used := map[string]bool{}
	dirs := make([]string, len(cells))
	for i, c := range cells {
		d := dirName(c.Label)
		for k := 2; used[key(d)]; k++ {
			if d = fmt.Sprintf("%s-%d", dirName(c.Label), k); natural[key(d)] {
				d = dirName(c.Label) // taken by another cell: try the next
			}
		}
		used[key(d)] = true
		dirs[i] = d
	}
	return dirs
}

// NetworkCells returns every cell once per simulated network, each network
// given as LATENCY/BANDWIDTH (e.g. 1ms/1Gbit), its label ending in the
// network: how `compare --networks` runs the same algorithms on a fast and
// a slow network.
func NetworkCells(cells []Cell, networks []string) ([]Cell, error) {
	if big := checkGrid(cells, len(networks)); big != nil {
		return nil, fmt.Errorf("--networks %s: %w", strings.Join(networks, ","), big)
	}
	var out []Cell
	for _, n := range networks {
		lat, bw, ok := strings.Cut(n, "/")
		if !ok {
			return nil, fmt.Errorf("--networks %s: want LATENCY/BANDWIDTH such as 1ms/1Gbit or 50ms/10Mbit", n)
		}
		for _, cell := range cells {
			c := Cell{Label: cell.Label + " / " + n, Configs: slices.Clone(cell.Configs), Vary: cell.Vary}
			for k := range c.Configs {
				if err := c.Configs[k].Set("link-latency", lat); err != nil {
					return nil, fmt.Errorf("--networks %s: want a latency such as 1ms before the /", n)
				}
				if err := c.Configs[k].Set("link-bandwidth", bw); err != nil {
					return nil, fmt.Errorf("--networks %s: want a bandwidth such as 1Gbit after the /", n)
				}
				if !c.Configs[k].SimulatesNetwork() {
					return nil, fmt.Errorf("--networks %s: simulates no network (no latency, unlimited bandwidth); want a latency or a bandwidth such as 1ms/1Gbit", n)
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// DuplicateCellsError is a grid two of whose cells have the same settings
// once defaults are filled in and names normalised (choco and choco:none,
// gamma=0 and CHOCO's default γ): the grid would run them twice.
type DuplicateCellsError struct {
	First, Second string // the cells' labels
}

func (e *DuplicateCellsError) Error() string {
	return fmt.Sprintf("cells %s and %s have the same settings: the grid would run them twice", e.First, e.Second)
}

// GridFolderError is an output folder that holds something other than the
// grid about to run there: other files, another grid, or a damaged
// grid.json. RunGrid runs there only when told to.
type GridFolderError struct {
	Dir    string
	Reason string
}

func (e *GridFolderError) Error() string { return e.Dir + " " + e.Reason }
