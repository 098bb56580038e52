package train

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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
// every partition, each under seeds seeds.
func CompareCells(base Config, algos, partitions []string, seeds int) []Cell {
	var cells []Cell
	for _, a := range algos {
		for _, p := range partitions {
			c := base
			c.Algo, c.Partition = a, p
			cells = append(cells, Cell{Label: a + " / " + p, Configs: Seeds(c, seeds)})
		}
	}
	return cells
}

// SweepCells returns the cells of `gtstorm sweep`: base with the setting
// named by param (rho, pc, nodes, eta0, batch, partition, algo or
// topology) set to each of values in turn.
func SweepCells(base Config, param string, values []string, seeds int) ([]Cell, error) {
	var cells []Cell
	for _, v := range values {
		c := base
		if err := c.set(param, v); err != nil {
			return nil, err
		}
		cells = append(cells, Cell{Label: param + "=" + v, Configs: Seeds(c, seeds)})
	}
	return cells, nil
}

// Sweepable lists the settings SweepCells can vary.
const Sweepable = "rho, pc, nodes, eta0, batch, partition, algo, topology"

// set sets the setting named param from its flag form.
func (c *Config) set(param, v string) error {
	bad := func(want string) error { return &ConfigError{"vary", param + "=" + v, want} }
	num := func(dst *float64) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad("a number")
		}
		*dst = x
		return nil
	}
	integer := func(dst *int) error {
		x, err := strconv.Atoi(v)
		if err != nil {
			return bad("an integer")
		}
		*dst = x
		return nil
	}
	switch param {
	case "rho":
		return num(&c.Rho)
	case "pc":
		return num(&c.PC)
	case "eta0":
		return num(&c.Eta0)
	case "nodes":
		return integer(&c.Nodes)
	case "batch":
		return integer(&c.Batch)
	case "partition":
		c.Partition = v
	case "algo":
		c.Algo = v
	case "topology":
		c.Topology = v
	default:
		return &ConfigError{"vary", param, "one of " + Sweepable}
	}
	return nil
}

// RunGrid runs every cell's configurations, each in its own folder under
// out (<label>/seed<k>). A run already finished there with the same
// configuration is read back instead of repeated, and an interrupted one is
// resumed, so an interrupted grid continues where it stopped.
func RunGrid(ctx context.Context, cells []Cell, out string, opt Options) ([]CellResult, error) {
	for _, c := range cells {
		for _, cfg := range c.Configs {
			if err := cfg.Validate(); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Label, err)
			}
		}
	}
	unlock, err := lockOut(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	results := make([]CellResult, len(cells))
	total := 0
	for _, c := range cells {
		total += len(c.Configs)
	}
	n := 0
	for i, c := range cells {
		results[i].Cell = c
		for _, cfg := range c.Configs {
			n++
			dir := filepath.Join(out, dirName(c.Label), fmt.Sprintf("seed%d", cfg.Seed))
			if opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "[%d/%d] %s, seed %d → %s\n", n, total, c.Label, cfg.Seed, dir)
			}
			o := opt
			o.Out = dir
			sum, rows, err := runOrReuse(ctx, cfg, o)
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", c.Label, cfg.Seed, err)
			}
			results[i].Summaries = append(results[i].Summaries, sum)
			results[i].Rows = append(results[i].Rows, rows)
		}
	}
	return results, nil
}

// runOrReuse returns the finished run of cfg in o.Out, resuming or starting
// it as needed.
func runOrReuse(ctx context.Context, cfg Config, o Options) (*Summary, []Row, error) {
	if prev, err := readConfig(filepath.Join(o.Out, ConfigFile)); err == nil && reflect.DeepEqual(prev, cfg) {
		if sum, rows, err := readRun(o.Out); err == nil {
			return sum, rows, nil
		}
		if _, err := os.Stat(filepath.Join(o.Out, CheckpointFile)); err == nil {
			if _, err := Resume(ctx, o.Out, 0, o); err != nil {
				return nil, nil, err
			}
			return readRun(o.Out)
		}
	}
	o.Overwrite = true // a run of other settings, or a broken one: the grid's own folder
	if _, err := Train(ctx, cfg, o); err != nil {
		return nil, nil, err
	}
	return readRun(o.Out)
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
