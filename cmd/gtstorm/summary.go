package main

import (
	"fmt"
	"io"

	"github.com/gtstorm/gtstorm/internal/memlimit"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
)

// runSummary prints a network's layers, their output shapes and
// parameter counts, and the memory of one worker's training graph.
func runSummary(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("summary", "summary --model NAME|FILE.onnx|FILE.gtck [--dataset D] [--batch B] [--trainable PATTERNS]", stdout)
	model := fs.String("model", "", "the network: a name ("+models.Available+"), an ONNX file FILE.onnx as train would import it for --dataset, or a model file (model.gtck) of a run")
	dataset := fs.String("dataset", "mnist", "the data the network is built for (its sample shape and classes); ignored for a model file")
	dir := fs.String("data-dir", "", "the dataset's folder, where its sample shape depends on it (images)")
	batch := fs.Int("batch", 64, "minibatch size of the training graph whose memory is estimated")
	trainable := fs.String("trainable", "", "initialisers of an ONNX file that torch trains (as train's --trainable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *model == "" {
		return usagef("--model: want a network name, FILE.onnx or a model file (model.gtck)")
	}
	if *batch < 1 {
		return usagef("--batch %d: want a minibatch size of at least 1", *batch)
	}
	m, err := train.DescribeModel(*model, *dataset, *dir, *trainable)
	if err != nil {
		return runError(err)
	}
	if err := models.WriteSummary(stdout, m); err != nil {
		return runError(err)
	}
	if b, err := models.WorkerBytes(m, []int{*batch}, nil); err == nil {
		fmt.Fprintf(stdout, "one worker's training graph at batch %d: about %s (parameters, activations, gradients)\n", *batch, memlimit.Format(b))
	}
	return nil
}
