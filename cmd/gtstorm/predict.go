package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gtstorm/gtstorm/train/modelfile"
)

// runPredict classifies image files with a saved image model.
func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict", "predict --model FILE [--top K] [--json] IMAGE...\n\n"+
		"Classifies PNG or JPEG images (no other format) of any size, colour or grey,\n"+
		"with the image model of a run: each is converted to the model's channels,\n"+
		"resized to its input and standardised as the training data was, and its most\n"+
		"probable classes are printed. Transparent pixels are composed over white (for\n"+
		"a one-channel model, light ink over black). Models of mnist, fashion-mnist and\n"+
		"femnist (one channel) expect light ink on a dark background: an image whose\n"+
		"border is light, such as dark ink on paper, is inverted, with a note on\n"+
		"stderr; colour images never are. The model of an image folder (--dataset\n"+
		"images) gets its images exactly as the folder's were converted: transparency\n"+
		"over black, never inverted. A file that cannot be read gets a line on stderr\n"+
		"(with --json, an object with its \"error\") and exit status 1 once the others\n"+
		"are classified.", stdout)
	model := fs.String("model", "", "model file (model.gtck of a run of an image model)")
	top := fs.Int("top", 3, "number of most probable classes to print (all of them when the model has fewer)")
	asJSON := fs.Bool("json", false, `print one JSON object per image per line: {"image": PATH, "top": [{"class": C, "name": N, "prob": P}, ...]}, with "inverted": true for an inverted image; {"image": PATH, "error": MESSAGE} for a file that cannot be read`)
	images, err := parseArgsAnywhere(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *model == "":
		return usagef("--model: want a model file (model.gtck of a run of an image model)")
	case *top < 1:
		return usagef("--top %d: want at least 1 class", *top)
	case len(images) == 0:
		return usagef("no IMAGE given: want one or more PNG or JPEG files")
	}
	preds, err := modelfile.Predict(*model, images, *top)
	if preds == nil {
		return runError(err)
	}
	failed := 0
	for _, p := range preds {
		if p.Inverted {
			fmt.Fprintf(stderr, "gtstorm predict: note: %s has a light background; inverted it to light ink on dark, as the model's training images\n", p.Image)
		}
		if p.Error != "" {
			failed++
		}
		if err := printPrediction(stdout, stderr, p, *asJSON); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d images could not be classified", failed, len(preds))
	}
	return nil
}

// printPrediction prints one image's prediction: a JSON line on stdout
// with asJSON; otherwise its classes on stdout, or its error on stderr.
func printPrediction(stdout, stderr io.Writer, p modelfile.Prediction, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(p)
	}
	if p.Error != "" {
		_, err := fmt.Fprintf(stderr, "gtstorm predict: %s\n", p.Error)
		return err
	}
	parts := make([]string, len(p.Top))
	for i, c := range p.Top {
		parts[i] = fmt.Sprintf("%s %.4f", c.Name, c.Prob)
	}
	_, err := fmt.Fprintf(stdout, "%s: %s\n", p.Image, strings.Join(parts, ", "))
	return err
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
