package main

import (
	"fmt"
	"io"

	"github.com/gtstorm/gtstorm/train/modelfile"
)

// runExport writes a saved image model as an ONNX model.
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "export --model FILE --onnx FILE", stdout)
	model := fs.String("model", "", "saved model to export: model.gtck (or checkpoint.gtck) of a run of an image model (any --model but logreg)")
	out := fs.String("onnx", "", "ONNX file to write (replaced atomically); its graph takes the network's input, float32 NCHW [N,C,H,W] with N dynamic, scaled as gtstorm feeds it, and returns the logits [N,classes]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *model == "" {
		return usagef("--model: want a model file (model.gtck of a run)")
	}
	if *out == "" {
		return usagef("--onnx: want the ONNX file to write")
	}
	res, err := modelfile.Export(*model, *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes): %s, %d parameters, ONNX opset %d; input %q float32 %s NCHW, output %q float32 %s logits\n",
		res.Path, res.Bytes, res.Model, res.Params, res.Opset, "input", shapeText(res.Input), "logits", shapeText(res.Output))
	return nil
}

// shapeText writes a shape with its dynamic dimensions (-1) as N.
func shapeText(s []int) string {
	out := "["
	for i, d := range s {
		if i > 0 {
			out += ","
		}
		if d < 0 {
			out += "N"
		} else {
			out += fmt.Sprint(d)
		}
	}
	return out + "]"
}
