package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gtstorm/gtstorm/train"
)

// runPredict classifies image files with a saved image model.
func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict", "predict --model FILE [--top K] [--json] IMAGE...\n\n"+
		"Classifies PNG or JPEG images of any size, colour or grey, with the model of an\n"+
		"mnist or cifar10 run: each is converted to the model's channels, resized to its\n"+
		"input and standardised as the training data was, and its most probable classes\n"+
		"are printed. MNIST models expect a light digit on a dark background, as MNIST's.", stdout)
	model := fs.String("model", "", "model file (model.gtck of an mnist or cifar10 run)")
	top := fs.Int("top", 3, "number of most probable classes to print (all of them when the model has fewer)")
	asJSON := fs.Bool("json", false, `print one JSON object per image per line: {"image": PATH, "top": [{"class": C, "name": N, "prob": P}, ...]}`)
	images, err := parseArgsAnywhere(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *model == "":
		return usagef("--model: want a model file (model.gtck of an mnist or cifar10 run)")
	case *top < 1:
		return usagef("--top %d: want at least 1 class", *top)
	case len(images) == 0:
		return usagef("no IMAGE given: want one or more PNG or JPEG files")
	}
	preds, err := train.Predict(*model, images, *top)
	if err != nil {
		return runError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, p := range preds {
			if err := enc.Encode(p); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range preds {
		parts := make([]string, len(p.Top))
		for i, c := range p.Top {
			parts[i] = fmt.Sprintf("%s %.4f", c.Name, c.Prob)
		}
		if _, err := fmt.Fprintf(stdout, "%s: %s\n", p.Image, strings.Join(parts, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// parseArgsAnywhere parses flags that may stand before, between or after the
// positional arguments, which it returns in order; everything after "--" is
// positional (parseWithArgs would read a file named -x there as a flag).
func parseArgsAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseOnce(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
