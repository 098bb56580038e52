package train

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

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
}

// Bench builds the run of cfg, runs warmup rounds, then times cfg.Iters
// rounds without evaluations or outputs.
func Bench(ctx context.Context, cfg Config, warmup int) (*BenchResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if warmup < 0 {
		return nil, &ConfigError{"warmup", warmup, "0 or more rounds"}
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
