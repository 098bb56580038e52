package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/gtstorm/gtstorm/train"
)

// runBench times rounds of one algorithm and prints one JSON line.
func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", "bench [--iters T] [--warm-rounds W] [run flags]", stdout)
	cfg := train.Default()
	cfg.Iters = 20
	cfg.Flags(fs)
	warmup := fs.Int("warm-rounds", 3, "rounds run before the clock starts (--warmup is the step-size warm-up)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := signalContext(stderr, "")
	defer stop()
	res, err := train.Bench(ctx, cfg, *warmup)
	if err != nil {
		return runError(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(b))
	return nil
}
